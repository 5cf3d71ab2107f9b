// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "system.h"

#include <memory>
#include <vector>

class QSocketNotifier;

namespace slp::bench {

// --sink: the large-body upstream. Reads each request (slp_test_wire parses it), discards the
// body as it comes, then answers 200 {} (the mock would parse and record it, which costs more
// than the proxy hop being measured), or, when the request says `X-Sink-Response-Bytes: N`, a
// JSON body of exactly N bytes. A request without a length gets 411.
class Sink
{
public:
    Sink();
    ~Sink();
    bool listen(const Endpoint &ep);

    struct Peer;

private:
    void sendAnswer(const std::shared_ptr<Peer> &peer);
    void onAccept();
    void drop(const std::shared_ptr<Peer> &peer);
    void onRead(const std::shared_ptr<Peer> &peer);

    int m_fd = -1;
    std::unique_ptr<QSocketNotifier> m_acceptN;
    std::vector<std::shared_ptr<Peer>> m_peers;
};

} // namespace slp::bench
