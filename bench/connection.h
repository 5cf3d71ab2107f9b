// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "system.h"

#include "wire/parser.h"

#include <QByteArray>
#include <QList>

#include <functional>
#include <memory>
#include <vector>

class QSocketNotifier;

namespace slp::bench {

// One HTTP/1.1 client connection: keep-alive, one request at a time. slp_test_wire parses the
// response (Content-Length, chunked or close-delimited); SSE event ends ("\n\n" in the body)
// are time-stamped.
class Conn
{
public:
    Conn(const Endpoint &ep, bool recordEvents);
    ~Conn();
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;

    // Called once per request, when the response ended or the exchange failed.
    std::function<void(Conn &)> onDone;

    // Results of the last request.
    int status = 0;
    bool failed = false;
    qint64 startNs = 0;
    qint64 endNs = 0;
    qint64 bodyBytes = 0;
    std::vector<qint64> eventNs;

    void request(const QByteArray &head, const QByteArray &body);
    void closeSocket();

private:
    bool openSocket();
    void onWritable();
    void flush();
    void onReadable();
    void finish(qint64 t);
    void fail();
    void scanEvents(const char *p, size_t n, qint64 t);

    Endpoint m_ep;
    bool m_recordEvents;
    int m_fd = -1;
    bool m_connected = false;
    bool m_active = false;
    bool m_lastNl = false;
    bool m_responseEnded = false;
    qint64 m_readNs = 0; // arrival of the bytes being parsed
    wire::Parser m_parser{wire::Parser::Kind::Response};
    QList<QByteArray> m_out;
    qint64 m_outOffset = 0;
    std::unique_ptr<QSocketNotifier> m_readN;
    std::unique_ptr<QSocketNotifier> m_writeN;
};

} // namespace slp::bench
