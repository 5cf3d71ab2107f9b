// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace slp {

// Whether a Content-Type value names the media type text/event-stream (RFC 9110 8.3.1):
// type and subtype compared case-insensitively, optional whitespace around them, then
// nothing or ";" and parameters. "text/event-streaming" or "text/event-stream-x" is not.
bool isEventStream(QByteArrayView contentType);

// A header value of the form `token *( OWS ";" OWS name "=" value )` (RFC 9110 5.6.6), as
// Content-Type and Content-Disposition are written: the leading token lowercased, parameter
// names lowercased, values as written (a quoted-string unquoted, its backslash escapes
// undone). `valid` is false when a parameter is not `name=value` or a quoted-string is not
// closed; the fields parsed before the fault are kept.
struct HeaderParameters
{
    bool valid = false;
    QByteArray token; // "multipart/form-data", "form-data", ...
    QList<QPair<QByteArray, QByteArray>> parameters;
    // Names of the parameters whose quoted-string held a backslash escape (undone above):
    // parsers differ on undoing them.
    QList<QByteArray> escaped;

    // The first parameter called `name` (lowercase): whether there is one, and its value.
    bool has(QByteArrayView name) const;
    QByteArray value(QByteArrayView name) const;
    int count(QByteArrayView name) const;
};
HeaderParameters parseHeaderParameters(QByteArrayView value);

// Whether `contentType` names the media type `type` ("multipart/form-data", lowercase).
bool isMediaType(QByteArrayView contentType, QByteArrayView type);

} // namespace slp
