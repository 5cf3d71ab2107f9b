// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace slp {

// A WebSocket upgrade (GET /v1/realtime?model=...) has no body: its model id is the `model`
// query parameter. The lookup needs the id percent-decoded; the rename must touch only that
// value's bytes so the rest of the target reaches the backend exactly as the client sent it.
struct UpgradeModel
{
    bool found = false;       // a `model=` parameter is in the query
    QByteArray id;            // its value, percent-decoded ('+' stays '+': not a form body)
    qsizetype valueStart = 0; // where the encoded value starts in the target
    qsizetype valueLength = 0;
};

// The first `model` parameter of the target's query (between '?' and '#'); `found` is false
// when there is no query or no parameter named exactly `model`.
UpgradeModel findUpgradeModel(QByteArrayView target);

// `target` with the value `model` located replaced by `newId` percent-encoded (RFC 3986
// unreserved characters kept); every other byte of the target is kept.
QByteArray renameUpgradeModel(QByteArrayView target, const UpgradeModel &model,
                              QByteArrayView newId);

} // namespace slp
