// SPDX-License-Identifier: GPL-3.0-or-later
#include "notifysocket.h"

#include "childprocess.h"

#include <QFile>
#include <QMap>
#include <QSocketNotifier>

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace slp::test {

bool FakeNotifySocket::Message::has(const QByteArray &line) const
{
    return text.split('\n').contains(line);
}

QByteArray FakeNotifySocket::Message::value(const QByteArray &key) const
{
    for (const QByteArray &line : text.split('\n'))
        if (line.startsWith(key + '='))
            return line.mid(key.size() + 1);
    return {};
}

FakeNotifySocket::FakeNotifySocket()
{
    m_clock.start();
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    const QByteArray name = QFile::encodeName(path());
    if (!m_dir.isValid() || name.size() >= qsizetype(sizeof(address.sun_path)))
        return;
    std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
    m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return;
    if (::bind(m_fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0) {
        ::close(m_fd);
        m_fd = -1;
        return;
    }
    m_notifier = std::make_unique<QSocketNotifier>(m_fd, QSocketNotifier::Read);
    QObject::connect(m_notifier.get(), &QSocketNotifier::activated, [this] { readAll(); });
}

FakeNotifySocket::~FakeNotifySocket()
{
    m_notifier.reset();
    if (m_fd >= 0)
        ::close(m_fd);
}

QString FakeNotifySocket::path() const
{
    return m_dir.filePath(QStringLiteral("notify"));
}

QMap<QString, QString> FakeNotifySocket::environment() const
{
    return {{QStringLiteral("NOTIFY_SOCKET"), path()}};
}

void FakeNotifySocket::readAll()
{
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::recv(m_fd, buffer, sizeof(buffer), 0);
        if (n < 0)
            return;
        m_messages.append({QByteArray(buffer, qsizetype(n)), m_clock.elapsed()});
    }
}

qsizetype FakeNotifySocket::waitFor(const QByteArray &line, int timeoutMs, qsizetype from)
{
    QElapsedTimer t;
    t.start();
    for (;;) {
        readAll();
        for (qsizetype i = from; i < m_messages.size(); ++i)
            if (m_messages.at(i).has(line))
                return i;
        if (t.elapsed() > timeoutMs)
            return -1;
        pumpEvents(20);
    }
}

qsizetype FakeNotifySocket::count(const QByteArray &line, qsizetype from) const
{
    qsizetype n = 0;
    for (qsizetype i = from; i < m_messages.size(); ++i)
        n += m_messages.at(i).has(line) ? 1 : 0;
    return n;
}

} // namespace slp::test
