#pragma once

#include "system.h"

#include <QByteArray>

#include <memory>
#include <vector>

class QSocketNotifier;

namespace slp::bench {

// --sink: the large-body upstream. Reads each request's head and Content-Length body,
// discards the bytes as they come, then answers 200 {} (the mock would parse and record them,
// which costs more than the proxy hop being measured).
class Sink
{
public:
    Sink();
    ~Sink();
    bool listen(const Endpoint &ep);

private:
    struct Peer
    {
        int fd = -1;
        std::unique_ptr<QSocketNotifier> n;
        QByteArray head;
        qint64 remaining = -1; // -1: reading a head
    };

    void onAccept();
    void drop(const std::shared_ptr<Peer> &peer);
    static void reply(int fd, const QByteArray &bytes);
    void onRead(const std::shared_ptr<Peer> &peer);

    int m_fd = -1;
    std::unique_ptr<QSocketNotifier> m_acceptN;
    std::vector<std::shared_ptr<Peer>> m_peers;
    QByteArray m_scratch;
};

} // namespace slp::bench
