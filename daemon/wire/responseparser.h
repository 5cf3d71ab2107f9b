// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/http1.h"

#include <QByteArray>
#include <QString>

#include <http_parser.h>

#include <deque>

namespace slp {

// A response head as an upstream sent it (what is final of it: never a 1xx but an accepted
// upgrade's 101).
struct UpstreamHead
{
    int status = 0;
    QByteArray reason;
    HeaderList headers;        // as received, hop-by-hop included; the core filters
    qint64 contentLength = -1; // -1: none given (the core frames the body itself)
};

// One connection's responses from an upstream, parsed by nodejs' http-parser: bytes in, a
// head, body bytes and the end out. Every way SLP reads an answer goes through it (the socket
// transport, the WebSocket upgrade, discovery's probes). Pure (no sockets), so every framing
// rule is unit-tested with bytes.
// Interim 1xx heads are skipped, never taken for the answer; a length is reported only when
// the body is not also chunked; bytes after a complete response mark the connection spent.
class ResponseParser
{
public:
    // The largest response head accepted (process-wide in http-parser 2.9, set once).
    static constexpr uint32_t kMaxHeadBytes = 64 * 1024;

    ResponseParser();
    ResponseParser(const ResponseParser &) = delete;
    ResponseParser &operator=(const ResponseParser &) = delete;

    // Ready for a new response; `headRequest`: it answers a HEAD (a length but no body);
    // `acceptUpgrade`: it answers a WebSocket upgrade, so a 101 with Upgrade and Connection
    // is the final head, after which the connection carries another protocol.
    void reset(bool headRequest, bool acceptUpgrade = false);
    // Parses `data`; body bytes are queued for read().
    void feed(const QByteArray &data);
    // The peer closed: ends a close-delimited body (anything else still open is an error).
    void feedEof();

    bool hasError() const;
    // What went wrong, for the log: "larger than 64 KiB" for an oversized head.
    QString errorText() const;

    // The final head, once, as soon as it is complete.
    bool takeHead(UpstreamHead *head);
    // Whether body bytes arrived since the last call.
    bool takeBodyGrew() { return std::exchange(m_bodyGrew, false); }
    bool isComplete() const { return m_messageComplete; }
    bool hasExtraBytes() const { return m_extraBytes; }
    bool keepAlive() const { return m_keepAlive; }
    // The head was a 101 to an accepted upgrade: the bytes that followed it in the same reads
    // are the new protocol's, handed over once.
    bool isUpgraded() const { return m_upgraded; }
    QByteArray takeUpgradeBytes() { return std::exchange(m_upgradeBytes, {}); }

    qint64 buffered() const { return m_buffered; }
    QByteArray read(qint64 maxBytes);

private:
    static const http_parser_settings &settings();
    static ResponseParser *self(http_parser *p) { return static_cast<ResponseParser *>(p->data); }
    void endHeader();
    int headersComplete(); // http-parser's callbacks of the same name
    int messageComplete();
    void scanStatusLine(const char *data, qsizetype size);

    http_parser m_parser{};
    bool m_headRequest = false;
    bool m_acceptUpgrade = false;
    bool m_upgraded = false;
    QByteArray m_upgradeBytes;
    const QByteArray *m_feeding = nullptr; // the piece being parsed
    UpstreamHead m_pendingHead;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    bool m_interim = false;
    bool m_headPending = false;
    bool m_messageComplete = false;
    bool m_extraBytes = false;
    bool m_keepAlive = false;
    // http-parser 2.9 (not built strict) takes the byte after a CR in the status line for its
    // LF unseen, and lets a NUL into the reason phrase: SLP checks that line itself.
    bool m_inStatusLine = true;
    bool m_statusStarted = false; // past the empty lines a head may start with
    bool m_statusCr = false;      // the status line's last byte was a CR
    QString m_headError;          // what SLP itself refused in the head, if anything

    std::deque<QByteArray> m_chunks; // body bytes not yet read
    qsizetype m_chunkOffset = 0;
    qint64 m_buffered = 0;
    bool m_bodyGrew = false;
};

} // namespace slp
