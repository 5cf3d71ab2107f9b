// SPDX-License-Identifier: GPL-3.0-or-later
#include "upstream/qnam/qnamfence.h"

#include "wire/hex.h"

#include <QUrl>

namespace slp {

namespace {
// The socket transport's limits (ResponseParser::kMaxHeadBytes; Qt 6.4's own field cap).
constexpr qsizetype kMaxHeadBytes = 64 * 1024;
constexpr qsizetype kMaxHeaderFields = 100;

bool isUnreserved(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

// %XX of an unreserved character decoded; everything else as it is.
QByteArray decodeUnreserved(const QByteArray &in)
{
    QByteArray out;
    out.reserve(in.size());
    for (qsizetype i = 0; i < in.size(); ++i) {
        if (in[i] == '%' && i + 2 < in.size() && hexValue(in[i + 1]) >= 0 &&
            hexValue(in[i + 2]) >= 0) {
            const char c = char(hexValue(in[i + 1]) * 16 + hexValue(in[i + 2]));
            if (isUnreserved(c)) {
                out += c;
                i += 2;
                continue;
            }
        }
        out += in[i];
    }
    return out;
}

bool hasControlByte(const QByteArray &value)
{
    return value.contains('\r') || value.contains('\n') || value.contains('\0');
}

// What the socket transport's parser refuses in a header value: every control byte but HTAB
// (RFC 9110 5.5), DEL included.
bool hasFieldControlByte(const QByteArray &value)
{
    for (const char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7f)
            return true;
    }
    return false;
}
} // namespace

QByteArray qnamWireTarget(const UpstreamRequest &request)
{
    QUrl url = QUrl::fromEncoded(request.origin.toUtf8() + request.target, QUrl::StrictMode);
    if (!url.isValid())
        return {};
    QUrl::FormattingOptions format = QUrl::RemoveFragment | QUrl::RemoveUserInfo |
                                     QUrl::FullyEncoded | QUrl::RemoveScheme |
                                     QUrl::RemoveAuthority;
    if (url.path().isEmpty())
        url.setPath(QStringLiteral("/"));
    else
        format |= QUrl::NormalizePathSegments;
    return url.toEncoded(format);
}

bool qnamSendsTargetUnchanged(const UpstreamRequest &request)
{
    const QByteArray wire = qnamWireTarget(request);
    return !wire.isEmpty() && decodeUnreserved(wire) == decodeUnreserved(request.target);
}

QString qnamHeadFault(int status, const QByteArray &reason, const HeaderList &headers)
{
    if (status >= 100 && status < 200) {
        return QStringLiteral("an interim %1 response, which QNAM takes for the answer")
            .arg(status);
    }
    // Qt 6.4's header parser drops every field of a head over its limits (more than 100
    // fields) and QNAM goes on as if the head had none, reading the body to the close: a head
    // with no field at all is that, as far as SLP can tell (no real upstream sends one).
    if (headers.isEmpty())
        return QStringLiteral("no header fields (QNAM drops them all past 100 fields)");
    if (headers.size() > kMaxHeaderFields)
        return QStringLiteral("more than %1 header fields").arg(kMaxHeaderFields);
    if (hasControlByte(reason))
        return QStringLiteral("a CR, LF or NUL in the reason phrase");
    bool hasLength = false;
    bool hasTransferEncoding = false;
    qsizetype headBytes = 15 + reason.size(); // "HTTP/1.1 200 " ... "\r\n"
    for (const auto &[name, value] : headers) {
        headBytes += name.size() + value.size() + 4; // ": " and CRLF
        if (hasFieldControlByte(value)) {
            return QStringLiteral("a control byte in the value of %1")
                .arg(QString::fromLatin1(name));
        }
        hasLength = hasLength || equalsNoCase(name, "content-length");
        hasTransferEncoding = hasTransferEncoding || equalsNoCase(name, "transfer-encoding");
    }
    if (hasLength && hasTransferEncoding)
        return QStringLiteral("Content-Length together with Transfer-Encoding");
    if (headBytes + 2 > kMaxHeadBytes)
        return QStringLiteral("larger than 64 KiB");
    return {};
}

} // namespace slp
