// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QTcpServer>

class QTcpSocket;

namespace slp::test {

// A raw upstream on 127.0.0.1 answering each request with the scripted bytes named by the last
// path segment of its target (/v1/s/NAME, anything from '#' on ignored), recording every
// request's exact bytes, its target and the connection it came on. One request is read at a
// time (the wire parser stops after each), so the recorded bytes are exactly one request's.
class ScriptServer : public QObject
{
public:
    struct Recorded
    {
        QByteArray raw;
        QByteArray target;
        int connection = 0; // 1 for the first connection accepted, and so on
    };

    bool start();
    quint16 port() const { return m_server.serverPort(); }
    // The answer to NAME, written as it is (it may hold several heads, or no valid HTTP).
    void set(const QByteArray &name, const QByteArray &bytes) { m_scripts.insert(name, bytes); }
    // Bytes written on the same connection `delayMs` after the answer, unasked for.
    void setLater(const QByteArray &name, const QByteArray &bytes, int delayMs = 200);
    // Close the connection right after answering NAME.
    void closeAfter(const QByteArray &name) { m_close.insert(name); }

    QList<Recorded> recorded;
    int connections = 0;
    int laterWritten = 0; // how many setLater answers went out

private:
    struct Later
    {
        QByteArray bytes;
        int delayMs = 0;
    };
    void adopt(QTcpSocket *socket);
    // Answers one complete request; false when the connection is closed after it.
    bool answer(QTcpSocket *socket, const QByteArray &path);

    QTcpServer m_server;
    QHash<QByteArray, QByteArray> m_scripts;
    QHash<QByteArray, Later> m_later;
    QSet<QByteArray> m_close;
};

} // namespace slp::test
