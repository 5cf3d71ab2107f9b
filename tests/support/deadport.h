// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHostAddress>
#include <QString>
#include <QTcpSocket>

namespace slp::test {

// A loopback port nobody listens on, held for as long as this object lives: bound without
// SO_REUSEADDR (so the OS hands it to no other socket, not even a parallel test's port-0 pick)
// and not listening (so connections to it are refused).
class DeadPort
{
public:
    DeadPort() { m_socket.bind(QHostAddress::LocalHost, 0, QAbstractSocket::DontShareAddress); }
    quint16 port() const { return m_socket.localPort(); }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(port()); }
    void release() { m_socket.close(); }

private:
    QTcpSocket m_socket;
};

} // namespace slp::test
