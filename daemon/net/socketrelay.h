// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QObject>
#include <QSocketNotifier>
#include <QTimer>

#include <chrono>
#include <memory>

namespace slp {

// Two connected stream sockets joined byte for byte, both ways, until both have ended: the
// body of a WebSocket tunnel. The bytes are read into user space and written out (read(2)
// and write(2), not splice(2): a direction's buffer bounds what it holds, and a write error
// is seen as it happens). Nothing is parsed. Each direction holds at most `bufferBytes`
// its destination has not taken: past that, its source is not read (the kernel's buffers and
// then TCP hold the sender back), so a slow peer never makes SLP buffer without bound.
//
// A half-close is passed on: when one side ends its sending (EOF), the other side's sending
// is shut down (shutdown(SHUT_WR)) once everything before the EOF was written to it, and the
// other direction goes on. The relay ends when both directions have ended that way, or at
// once on a reset or a write error, on the idle timeout, or when cut().
class SocketRelay : public QObject
{
    Q_OBJECT
public:
    enum class End
    {
        Closed,         // both sides ended their sending, everything delivered
        ClientFailed,   // the client's side reset or refused a write
        UpstreamFailed, // the upstream's side reset or refused a write
        Idle,           // nothing moved either way for the idle timeout
        Cut,            // cut() (shutdown)
    };
    Q_ENUM(End)

    // Takes both descriptors (closed with the relay). `toUpstream` / `toClient`: bytes read
    // before the relay began, written first.
    SocketRelay(int clientFd, int upstreamFd, QByteArray toUpstream, QByteArray toClient,
                qint64 bufferBytes, QObject *parent = nullptr);
    ~SocketRelay() override;

    // 0: no idle limit.
    void setIdleTimeout(std::chrono::milliseconds timeout);
    // Ends the relay now: both connections close.
    void cut();

    qint64 bytesToUpstream() const { return m_up.moved; }
    qint64 bytesToClient() const { return m_down.moved; }
    bool isFinished() const { return m_finished; }

    // For the log: "closed", "client reset", ...
    static const char *endName(End end);

Q_SIGNALS:
    // Once; both descriptors are closed by then.
    void finished(slp::SocketRelay::End end);

private:
    struct Side
    {
        int fd = -1;
        std::unique_ptr<QSocketNotifier> readable;
        std::unique_ptr<QSocketNotifier> writable;
    };
    // One direction: what was read from `from` and not yet written to `to`.
    struct Direction
    {
        Side *from = nullptr;
        Side *to = nullptr;
        End readFailure = End::ClientFailed;  // how a failure on `from` ends the relay
        End writeFailure = End::ClientFailed; // ... and one on `to`
        QByteArray pending;
        qsizetype offset = 0;
        qint64 moved = 0;
        bool sourceEnded = false; // `from` sent its EOF
        bool shutDown = false;    // ... and `to` was told (SHUT_WR)
    };

    void setUp(Side &side, int fd);
    void onReadable(Direction &d);
    // Writes what `d` holds; false when the relay ended.
    bool flush(Direction &d);
    void updateNotifiers();
    void activity();
    void finish(End end);

    Side m_client;
    Side m_upstream;
    Direction m_up;   // client -> upstream
    Direction m_down; // upstream -> client
    qint64 m_bufferBytes;
    QTimer m_idle;
    bool m_finished = false;
};

} // namespace slp
