// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QString>
#include <QTemporaryDir>

#include <memory>

class QSocketNotifier;

namespace slp::test {

// What systemd's end of $NOTIFY_SOCKET sees (Type=notify): a Unix datagram socket bound in a
// temporary directory, collecting every message a child sends with sd_notify. Give the child
// environment() and wait for messages with waitFor().
class FakeNotifySocket
{
public:
    struct Message
    {
        QByteArray text;                               // "READY=1\nSTATUS=..."
        qint64 atMs = 0;                               // since the socket was made
        bool has(const QByteArray &line) const;        // one of its lines, exactly
        QByteArray value(const QByteArray &key) const; // "STATUS" -> its text
    };

    FakeNotifySocket();
    ~FakeNotifySocket();
    bool isValid() const { return m_fd >= 0; }
    QString path() const;
    QMap<QString, QString> environment() const; // NOTIFY_SOCKET=path

    QList<Message> messages() const { return m_messages; }
    // The index of the first message at or after `from` that has line `line`; -1 on timeout.
    qsizetype waitFor(const QByteArray &line, int timeoutMs, qsizetype from = 0);
    // How many messages since `from` have line `line`.
    qsizetype count(const QByteArray &line, qsizetype from = 0) const;
    qint64 elapsedMs() const { return m_clock.elapsed(); }

private:
    void readAll();

    QTemporaryDir m_dir;
    int m_fd = -1;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QList<Message> m_messages;
    QElapsedTimer m_clock;
};

} // namespace slp::test
