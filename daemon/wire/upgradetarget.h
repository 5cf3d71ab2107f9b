// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace slp {

// A WebSocket upgrade (GET /v1/realtime?model=...) has no body: its model id is the `model`
// query parameter. The lookup needs the id decoded; the rename must touch only that value's
// bytes so the rest of the target reaches the backend exactly as the client sent it.
//
// The query is read as the backends behind SLP read it (Starlette's parse_qsl, Go's
// url.ParseQuery): pairs split on '&', key and value percent-decoded with '+' as a space. A
// query they could read another model from is refused (`error`): a key that decodes to
// `model` given twice in any spelling (`model`, `%6Dodel`), a ';' that an older parser takes
// for a separator, an invalid percent escape in the model's pair (Go drops such a pair,
// Python keeps it as written), a raw byte over 0x7F in it (Starlette decodes the raw query
// as latin-1, Go keeps the bytes), or a '#' (Go keeps it in the query).
struct UpgradeModel
{
    bool found = false;       // one pair names the model
    QString error;            // why the query's model is ambiguous: a 400, nothing forwarded
    QByteArray id;            // its value, decoded
    qsizetype valueStart = 0; // where the encoded value starts in the target
    qsizetype valueLength = 0;
};

UpgradeModel findUpgradeModel(QByteArrayView target);

// A query component decoded as form parsers decode it: "%XX" to its byte, '+' to a space;
// false when an escape is not two hex digits.
bool decodeQueryComponent(QByteArrayView encoded, QByteArray *decoded);

// `target` with the value `model` located replaced by `newId` percent-encoded (RFC 3986
// unreserved characters kept); every other byte of the target is kept.
QByteArray renameUpgradeModel(QByteArrayView target, const UpgradeModel &model,
                              QByteArrayView newId);

} // namespace slp
