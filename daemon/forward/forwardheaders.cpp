// SPDX-License-Identifier: GPL-3.0-or-later
#include "forward/forwardheaders.h"

#include <QSet>

#include <algorithm>

namespace slp {

namespace {
bool is(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && qstrnicmp(a.data(), b.data(), a.size()) == 0;
}

// RFC 9110 7.6.1 plus the legacy names Go's ReverseProxy also drops.
bool isHopByHop(QByteArrayView name)
{
    return is(name, "connection") || is(name, "keep-alive") || is(name, "proxy-connection") ||
           is(name, "proxy-authenticate") || is(name, "proxy-authorization") || is(name, "te") ||
           is(name, "trailer") || is(name, "transfer-encoding") || is(name, "upgrade");
}

QSet<QByteArray> namedInConnection(const HeaderList &headers)
{
    QSet<QByteArray> names;
    for (const auto &[name, value] : headers) {
        if (is(name, "connection")) {
            for (const QByteArray &token : value.split(',')) {
                const QByteArray t = token.trimmed().toLower();
                if (!t.isEmpty())
                    names.insert(t);
            }
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
        if (isHopByHop(name) ||
            (!connectionNamed.isEmpty() && connectionNamed.contains(name.toLower())))
            continue;
        if (is(name, "host")) {
            host = value;
            continue;
        }
        if (is(name, "content-length") || is(name, "expect"))
            continue;
        if (is(name, "x-request-id")) {
            if (!out.hasClientRequestId) {
                out.hasClientRequestId = true;
                out.clientRequestId = value;
            }
            continue;
        }
        if (is(name, "x-forwarded-for")) {
            // Several X-Forwarded-For lines are one list; the client goes last.
            forwardedFor += forwardedFor.isEmpty() ? value : ", " + value;
            haveForwardedFor = true;
            continue;
        }
        haveProto = haveProto || is(name, "x-forwarded-proto");
        haveForwardedHost = haveForwardedHost || is(name, "x-forwarded-host");
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
        if (isHopByHop(name) || is(name, "content-length") ||
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
        if (is(name, "traceparent")) {
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
