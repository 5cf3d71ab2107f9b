// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

class QThread;

namespace slp::test {

class HostileUpstreamWorker;

// An upstream run by an attacker, on a thread of its own so it sends at full speed whatever
// the test thread does: GET /v1/models answers a set body, a huge one or one that never
// ends; every other request gets a scripted answer written in pieces with pauses between.
class HostileUpstream
{
public:
    HostileUpstream();
    ~HostileUpstream();
    HostileUpstream(const HostileUpstream &) = delete;
    HostileUpstream &operator=(const HostileUpstream &) = delete;

    bool start(); // listens on 127.0.0.1, a port the OS picks
    quint16 port() const;
    QString url() const; // "http://127.0.0.1:PORT"

    // What GET /v1/models answers from now on:
    void setModels(const QByteArray &json); // this JSON, with its Content-Length
    void setModelsHuge(qint64 bytes);       // a Content-Length of `bytes`, all of them sent
    void setModelsEndless();                // chunked, never ending: sent until SLP hangs up
    // The answer to any other request: `head` (status line and fields, up to the empty line)
    // at once, then each piece after `pauseMs`, then the connection is closed.
    void setAnswer(const QByteArray &head, const QList<QByteArray> &pieces, int pauseMs);

    int modelsRequests() const; // GET /v1/models requests seen so far
    qint64 bytesSent() const;   // body bytes of /v1/models answers written so far

    // A model list of these ids in the OpenAI shape.
    static QByteArray modelList(const QList<QString> &ids);
    // The smallest valid list of `count` ids "m-0" ... (200,000: about 3.3 MB).
    static QByteArray manyModels(int count);

private:
    std::unique_ptr<QThread> m_thread;
    HostileUpstreamWorker *m_worker = nullptr; // lives in m_thread
    quint16 m_port = 0;
};

} // namespace slp::test
