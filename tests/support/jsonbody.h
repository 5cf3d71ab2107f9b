// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "httpclient.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace slp::test {

// The top-level object of a JSON body, what most checks of an answer read; an empty object
// when the body is not one (the check that reads a field from it then fails, naming it).
inline QJsonObject jsonObject(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

inline QJsonObject jsonObject(const HttpResult &r)
{
    return jsonObject(r.body);
}

} // namespace slp::test
