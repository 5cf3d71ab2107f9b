// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "http/clientconnection.h"
#include "quietwindow.h"

#include <QByteArray>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

#include <functional>
#include <memory>

namespace slp::test {

// A real client socket and, on the server side of 127.0.0.1, a ClientConnection with SLP's
// limits (and a body budget of its own unless the settings name one): what unit tests of the
// response writer and the forward exchange write into and read back byte for byte. Every wait
// is bounded.
class ConnectionPair
{
public:
    static constexpr int kWaitMs = 5000; // generous: the CI machine is a busy 2-core box

    explicit ConnectionPair(const ConnectionSettings &settings = {});
    ~ConnectionPair();
    ConnectionPair(const ConnectionPair &) = delete;
    ConnectionPair &operator=(const ConnectionPair &) = delete;

    // Runs the event loop until `condition` holds; false after `ms`.
    static bool waitFor(const std::function<bool()> &condition, int ms = kWaitMs);
    // Lets the loop run for the quiet window, for "nothing more arrives" checks.
    static void settle(int ms = kQuietWindowMs);

    ClientConnection *connection() const { return m_connection; }
    // A response's place on the connection, as its requests would get one (a friend of
    // ClientConnection: only the connection itself opens writers in slp).
    ResponseWriter *openWriter(const ResponseContext &context) const
    {
        return m_connection->openWriter(context);
    }
    QTcpSocket *client() const { return m_client.get(); }
    QTcpSocket *serverSide() const { return m_serverSide; }

    // Waits until at least `n` bytes arrived.
    bool receive(qsizetype n);
    // Waits for a whole response with Content-Length (or a close).
    bool receiveResponse();
    // Waits for the server to close the connection.
    bool waitClosed(int ms = kWaitMs);

    QByteArray received() const { return m_received; }
    QByteArray take() { return std::exchange(m_received, {}); }
    bool closed() const { return m_closed; }
    // A client that stops reading lets the server's socket back up (backpressure).
    void setReading(bool reading);

private:
    BodyBudget m_bodies; // outlives the connection (declared first)
    QTcpServer m_server;
    std::unique_ptr<QTcpSocket> m_client;
    QPointer<QTcpSocket> m_serverSide;
    QPointer<ClientConnection> m_connection;
    QByteArray m_received;
    bool m_closed = false;
    bool m_reading = true;
};

} // namespace slp::test
