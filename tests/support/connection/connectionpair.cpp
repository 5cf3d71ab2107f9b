// SPDX-License-Identifier: GPL-3.0-or-later
#include "connectionpair.h"

#include <QDeadlineTimer>
#include <QTest>

namespace slp::test {

ConnectionPair::ConnectionPair(const ConnectionSettings &settings)
{
    ConnectionSettings withBudget = settings;
    if (!withBudget.bodies)
        withBudget.bodies = &m_bodies;
    if (!m_server.listen(QHostAddress::LocalHost, 0))
        qFatal("listen failed: %s", qPrintable(m_server.errorString()));
    m_client = std::make_unique<QTcpSocket>();
    QObject::connect(
        m_client.get(), &QTcpSocket::readyRead, m_client.get(),
        [this] {
            if (m_reading)
                m_received += m_client->readAll();
        });
    QObject::connect(m_client.get(), &QTcpSocket::disconnected, m_client.get(),
                     [this] { m_closed = true; });
    m_client->connectToHost(QHostAddress::LocalHost, m_server.serverPort());
    if (!m_server.waitForNewConnection(kWaitMs))
        qFatal("no connection accepted");
    m_serverSide = m_server.nextPendingConnection(); // owned by m_server until reparented
    m_serverSide->setParent(nullptr);
    m_connection = new ClientConnection(m_serverSide, withBudget); // Qt child of the socket
    if (!waitFor([this] { return m_client->state() == QAbstractSocket::ConnectedState; }))
        qFatal("client did not connect");
}

ConnectionPair::~ConnectionPair()
{
    m_client.reset();
    delete m_serverSide.data();
}

bool ConnectionPair::waitFor(const std::function<bool()> &condition, int ms)
{
    QDeadlineTimer deadline(ms);
    while (!condition()) {
        if (deadline.hasExpired())
            return false;
        QTest::qWait(5);
    }
    return true;
}

void ConnectionPair::settle(int ms)
{
    QTest::qWait(ms);
}

bool ConnectionPair::receive(qsizetype n)
{
    return waitFor([&] { return m_received.size() >= n; });
}

bool ConnectionPair::receiveResponse()
{
    return waitFor([this] {
        const qsizetype end = m_received.indexOf("\r\n\r\n");
        if (end < 0)
            return m_closed;
        const qsizetype at = m_received.indexOf("Content-Length: ");
        if (at < 0 || at > end)
            return m_closed;
        const qsizetype eol = m_received.indexOf("\r\n", at);
        const qint64 length = m_received.mid(at + 16, eol - at - 16).toLongLong();
        return m_received.size() >= end + 4 + length;
    });
}

bool ConnectionPair::waitClosed(int ms)
{
    return waitFor([this] { return m_closed; }, ms);
}

void ConnectionPair::setReading(bool reading)
{
    m_reading = reading;
    if (reading)
        m_received += m_client->readAll();
}

} // namespace slp::test
