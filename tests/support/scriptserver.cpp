// SPDX-License-Identifier: GPL-3.0-or-later
#include "scriptserver.h"

#include "wire/parser.h"

#include <QTcpSocket>
#include <QTimer>

#include <memory>
#include <utility>

namespace slp::test {

bool ScriptServer::start()
{
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *s = m_server.nextPendingConnection())
            adopt(s);
    });
    return m_server.listen(QHostAddress::LocalHost, 0);
}

void ScriptServer::setLater(const QByteArray &name, const QByteArray &bytes, int delayMs)
{
    m_later.insert(name, {bytes, delayMs});
}

void ScriptServer::adopt(QTcpSocket *socket)
{
    const int id = ++connections;
    struct Reader
    {
        slp::wire::Parser parser{slp::wire::Parser::Kind::Request};
        QByteArray raw; // the bytes of the request being read
        bool done = false;
    };
    auto reader = std::make_shared<Reader>();
    reader->parser.onMessage = [r = reader.get()] { r->done = true; };
    connect(socket, &QTcpSocket::readyRead, socket, [this, socket, reader, id] {
        const QByteArray in = socket->readAll();
        QByteArrayView rest(in);
        while (!rest.isEmpty()) {
            const qsizetype used = reader->parser.feed(rest);
            reader->raw += rest.first(used);
            rest = rest.sliced(used);
            if (!std::exchange(reader->done, false))
                return; // all taken (or malformed): wait for more
            recorded.append(
                {std::exchange(reader->raw, QByteArray()), reader->parser.head().target, id});
            if (!answer(socket, reader->parser.head().path()))
                return;
        }
    });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
}

bool ScriptServer::answer(QTcpSocket *socket, const QByteArray &path)
{
    QByteArray name = path.mid(path.lastIndexOf('/') + 1);
    if (const qsizetype hash = name.indexOf('#'); hash >= 0)
        name.truncate(hash);
    socket->write(m_scripts.value(name));
    if (m_close.contains(name)) {
        socket->disconnectFromHost();
        return false;
    }
    if (m_later.contains(name)) {
        const Later later = m_later.value(name);
        QTimer::singleShot(later.delayMs, socket, [this, socket, bytes = later.bytes] {
            socket->write(bytes);
            ++laterWritten;
        });
    }
    return true;
}

} // namespace slp::test
