// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "message.h"

#include <QString>

#include <functional>
#include <memory>

struct http_parser;

namespace slp::wire {

// Incremental HTTP/1.x parser over http-parser (Debian's build: HTTP_PARSER_STRICT=0, so a few
// checks are lenient; header names are checked here): bytes in, message events out. Handles
// Content-Length, chunked and close-delimited bodies, HEAD/204/304/1xx responses without a
// body, and pipelined messages. Callbacks run inside feed(); a callback must not destroy the
// parser (record what happened and act after feed() returns).
class Parser
{
public:
    enum class Kind
    {
        Request,
        Response
    };
    enum class Failure
    {
        None,
        HeadTooLarge, // over http-parser's head limit (80 KiB)
        Closed,       // finish() inside a message
        Malformed,    // anything else http-parser refuses
    };

    explicit Parser(Kind kind);
    ~Parser();
    Parser(const Parser &) = delete;
    Parser &operator=(const Parser &) = delete;

    // Every head, interim 1xx heads included.
    std::function<void(const Head &)> onHead;
    // De-chunked body bytes; the view is valid during the call only.
    std::function<void(QByteArrayView)> onBody;
    // A chunk of a chunked body ended (its data and CRLF); size > 0, the last chunk is not one.
    std::function<void(qint64 size)> onChunk;
    // A message ended (interim 1xx heads do not end one).
    std::function<void()> onMessage;

    // Responses: the next response answers a HEAD request (a length, but no body). Cleared at
    // the end of that response.
    void expectHeadResponse(bool head = true) { m_headResponse = head; }
    // feed() returns right after each message's last byte, so the caller sees where the next
    // one starts (pipelining, or a connection that must answer one request at a time).
    // On by default.
    void setStopAfterMessage(bool stop) { m_stopAfterMessage = stop; }
    // Off: heads carry no header list (a load generator that only wants the status).
    void setKeepHeaders(bool keep) { m_keepHeaders = keep; }

    // Parses data; returns how many bytes belong to what was parsed. Less than data.size() when
    // a message ended (with stop-after-message) or on failure.
    qsizetype feed(QByteArrayView data);
    // The peer closed: ends a close-delimited body; a failure when inside any other message.
    void finish();
    // Back to a fresh state (a new connection); callbacks and settings stay.
    void reset();

    bool failed() const { return m_failure != Failure::None; }
    Failure failure() const { return m_failure; }
    const QString &error() const { return m_error; } // why it failed, for humans
    bool inMessage() const { return m_inMessage; }   // a message began and has not ended
    bool headDone() const { return m_headDone; }     // the current message's final head arrived
    int messages() const { return m_messages; }      // messages ended since reset()
    const Head &head() const { return m_head; }      // the last head parsed

private:
    struct Callbacks;
    void fail(Failure failure, QString why);
    bool endHeader(); // false: the name is not a token

    Kind m_kind;
    std::unique_ptr<http_parser> m_parser;
    bool m_headResponse = false;
    bool m_stopAfterMessage = true;
    bool m_keepHeaders = true;

    Head m_head;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    bool m_inMessage = false;
    bool m_headDone = false;
    bool m_interim = false;
    bool m_skipBody = false;
    qint64 m_chunkSize = 0;
    int m_messages = 0;
    Failure m_failure = Failure::None;
    QString m_error;
    QByteArray m_badName; // set when a header name was refused
};

} // namespace slp::wire
