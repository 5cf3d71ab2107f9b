// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/message.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QPair>
#include <QString>

#include <memory>

class QTcpSocket;

namespace slp::test {

using HeaderList = wire::HeaderList;

struct HttpResult
{
    int status = 0; // 0: no response head
    QByteArray version;
    QByteArray reason;
    HeaderList headers;         // in order, repeats kept
    QByteArray body;            // de-chunked
    bool complete = false;      // the body's end was seen (or the close that delimits it)
    bool peerClosed = false;    // the server closed the connection (during or right after)
    QByteArray raw;             // every byte of this response as received (1xx heads included)
    QList<int> interimStatuses; // 1xx heads seen before the final one
    // Ms after the request was sent: per decoded chunk for chunked bodies, else per socket
    // read carrying body bytes.
    QList<qint64> chunkArrivalMs;
    qint64 headMs = -1; // ms after the request was sent until the head was parsed
    qint64 elapsedMs = 0;
    QString error; // empty when a complete response arrived

    QByteArray header(QByteArrayView name) const; // first, case-insensitive; empty if absent
    QList<QByteArray> headerValues(QByteArrayView name) const;
    bool hasHeader(QByteArrayView name) const;
    bool ok() const { return complete && error.isEmpty(); }
};

// One client TCP connection for tests that need several requests on it, half-read
// responses, or to watch it being closed. Waits run the event loop, bounded by time.
class RawConnection
{
public:
    RawConnection();
    ~RawConnection();
    RawConnection(const RawConnection &) = delete;
    RawConnection &operator=(const RawConnection &) = delete;

    bool connectTo(const QString &host, quint16 port, int timeoutMs = 5000);
    // Writes bytes and waits (bounded) until the kernel took them. Restarts the clock that
    // HttpResult times are measured on.
    bool send(const QByteArray &bytes, int timeoutMs = 5000);
    // Reads the next response on this connection (pipelined leftovers are kept for the next).
    HttpResult readResponse(int timeoutMs, bool headRequest = false);
    // Waits until the unconsumed received bytes contain needle (e.g. the first SSE event).
    bool waitForData(QByteArrayView needle, int timeoutMs);
    QByteArray received() const; // unconsumed bytes
    // True once the peer has closed the connection (within timeoutMs).
    bool waitForClosed(int timeoutMs);
    bool isOpen() const;
    void close(); // FIN after pending writes
    void abort(); // drop at once
    QTcpSocket *socket() const { return m_socket.get(); }
    QString errorString() const;

private:
    bool readMore(int timeoutMs); // false on timeout or when closed and drained
    void drain();

    std::unique_ptr<QTcpSocket> m_socket;
    QList<QPair<QByteArray, qint64>> m_pending; // received, not yet consumed, with arrival ms
    QElapsedTimer m_clock;
    bool m_closed = false;
};

// Sends exactly `request` on a new connection and parses one response.
HttpResult rawHttp(const QString &host, quint16 port, const QByteArray &request,
                   int timeoutMs = 10000);
// Builds the request (Host, Content-Length when there is a body or the method is
// POST/PUT/PATCH, Connection: close) unless `headers` already has them.
HttpResult httpRequest(const QByteArray &method, const QString &url, const QByteArray &body = {},
                       const HeaderList &headers = {}, int timeoutMs = 10000);
QByteArray buildRequest(const QByteArray &method, const QString &url, const QByteArray &body = {},
                        const HeaderList &headers = {});

QByteArray sha256Hex(const QByteArray &data);
// The payloads of `data:` lines of an SSE body, one per event (multi-line data joined by \n).
QList<QByteArray> sseData(const QByteArray &body);

} // namespace slp::test
