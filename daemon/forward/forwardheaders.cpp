// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/forwardheaders.h"

#include "httpfield.h"

#include <QSet>

#include <algorithm>

namespace slp {

namespace {

QSet<QByteArray> namedInConnection(const HeaderList &headers)
{
    QSet<QByteArray> names;
    for (const auto &[name, value] : headers) {
        if (equalsNoCase(name, "connection")) {
            forEachToken(
                value,
                [&names](QByteArrayView token) {
                    names.insert(token.toByteArray().toLower());
                    return true;
                });
        }
    }
    return names;
}
} // namespace

InboundHeaders prepareUpstreamHeaders(const HeaderList &inbound, const QByteArray &clientAddress)
{
    InboundHeaders out;
    const QSet<QByteArray> connectionNamed = namedInConnection(inbound);
    QByteArray forwardedFor;
    bool haveForwardedFor = false;
    bool haveProto = false;
    bool haveForwardedHost = false;
    QByteArray host;
    out.forward.reserve(inbound.size() + 3);
    for (const auto &[name, value] : inbound) {
        if (isHopByHopHeader(name) ||
            (!connectionNamed.isEmpty() && connectionNamed.contains(name.toLower())))
            continue;
        if (equalsNoCase(name, "host")) {
            host = value;
            continue;
        }
        if (equalsNoCase(name, "content-length") || equalsNoCase(name, "expect"))
            continue;
        if (equalsNoCase(name, "x-request-id")) {
            if (!out.hasClientRequestId) {
                out.hasClientRequestId = true;
                out.clientRequestId = value;
            }
            continue;
        }
        if (equalsNoCase(name, "x-forwarded-for")) {
            // Several X-Forwarded-For lines are one list; the client goes last.
            forwardedFor += forwardedFor.isEmpty() ? value : ", " + value;
            haveForwardedFor = true;
            continue;
        }
        haveProto = haveProto || equalsNoCase(name, "x-forwarded-proto");
        haveForwardedHost = haveForwardedHost || equalsNoCase(name, "x-forwarded-host");
        out.forward.append({name, value});
    }
    if (!clientAddress.isEmpty())
        forwardedFor += forwardedFor.isEmpty() ? clientAddress : ", " + clientAddress;
    if (haveForwardedFor || !clientAddress.isEmpty())
        out.forward.append({QByteArrayLiteral("X-Forwarded-For"), forwardedFor});
    if (!haveProto)
        out.forward.append({QByteArrayLiteral("X-Forwarded-Proto"), QByteArrayLiteral("http")});
    if (!haveForwardedHost && !host.isEmpty())
        out.forward.append({QByteArrayLiteral("X-Forwarded-Host"), host});
    return out;
}

HeaderList prepareClientHeaders(const HeaderList &upstream)
{
    const QSet<QByteArray> connectionNamed = namedInConnection(upstream);
    HeaderList out;
    out.reserve(upstream.size());
    for (const auto &[name, value] : upstream) {
        if (isHopByHopHeader(name) || equalsNoCase(name, "content-length") ||
            (!connectionNamed.isEmpty() && connectionNamed.contains(name.toLower())))
            continue;
        out.append({name, value});
    }
    return out;
}

namespace {
bool isLowerHex(QByteArrayView text)
{
    return std::all_of(
        text.begin(), text.end(),
        [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool allZeros(QByteArrayView text)
{
    return std::all_of(
        text.begin(), text.end(), [](char c) { return c == '0'; });
}
} // namespace

QByteArray traceIdOf(const HeaderList &inbound)
{
    QByteArray value;
    int seen = 0;
    for (const auto &[name, v] : inbound) {
        if (equalsNoCase(name, "traceparent")) {
            value = v.trimmed();
            ++seen;
        }
    }
    constexpr qsizetype kLength = 55; // 2 + 1 + 32 + 1 + 16 + 1 + 2
    if (seen != 1 || value.size() < kLength || value[2] != '-' || value[35] != '-' ||
        value[52] != '-')
        return {};
    const QByteArrayView view(value);
    const QByteArrayView version = view.first(2);
    const QByteArrayView trace = view.sliced(3, 32);
    const QByteArrayView parent = view.sliced(36, 16);
    if (!isLowerHex(version) || !isLowerHex(trace) || !isLowerHex(parent) ||
        !isLowerHex(view.sliced(53, 2)) || version == "ff" || allZeros(trace) || allZeros(parent))
        return {};
    if (value.size() > kLength && (version == "00" || value[kLength] != '-'))
        return {};
    return trace.toByteArray();
}

} // namespace slp
