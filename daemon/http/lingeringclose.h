// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <chrono>

namespace slp {

// nginx's lingering_close. An answer sent before the request was read whole (413, 400, 431,
// 408, a full pipeline's 503) is followed by a close while the client is still sending; the
// kernel answers unread bytes with an RST, and a client that has not yet read the answer then
// sees "connection reset" instead of it. So the socket is handed over to a LingeringClose:
// once the answer is in the kernel, the write side is shut (the client reads the answer and
// a FIN) and whatever the client still sends is read and dropped, until it closes, or is
// silent for `quiet`, or `total` or `maxBytes` is reached. Nothing else reads the socket from
// then on: QtHttpServer's handler is disconnected, so no body byte is taken for a request.
class LingeringClose : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        std::chrono::milliseconds total{10000}; // nginx lingering_time is 30 s
        std::chrono::milliseconds quiet{2000};  // nginx lingering_timeout is 5 s
        qint64 maxBytes = 256 * 1024 * 1024;    // dropped before the close is forced
    };

    // Takes the socket over (a Qt child of it) and closes it when the linger ends.
    static void start(QTcpSocket *socket, const Limits &limits);
    static void start(QTcpSocket *socket) { start(socket, Limits{}); }

    qint64 droppedBytes() const { return m_dropped; }

private:
    LingeringClose(QTcpSocket *socket, const Limits &limits);
    void onBytesWritten();
    void shutWriteSide();
    void onReadyRead();
    void finish();

    QPointer<QTcpSocket> m_socket;
    Limits m_limits;
    QTimer m_total;
    QTimer m_quiet;
    qint64 m_dropped = 0;
    bool m_shut = false;
};

} // namespace slp
