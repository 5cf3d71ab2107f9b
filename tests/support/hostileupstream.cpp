// SPDX-License-Identifier: GPL-3.0-or-later
#include "hostileupstream.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>

#include <atomic>

namespace slp::test {

namespace {
constexpr qint64 kPiece = 256 * 1024;          // one write of a large body
constexpr qint64 kMaxQueued = 2 * 1024 * 1024; // written ahead of what the kernel took
} // namespace

class HostileUpstreamWorker : public QObject
{
public:
    enum class Models
    {
        Json,
        Huge,
        Endless
    };
    struct Settings
    {
        Models models = Models::Json;
        QByteArray json = R"({"object":"list","data":[{"id":"m"}]})";
        qint64 hugeBytes = 0;
        QByteArray head = "HTTP/1.1 204 No Content\r\n\r\n";
        QList<QByteArray> pieces;
        int pauseMs = 0;
    };

    quint16 listen()
    {
        connect(m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_server->nextPendingConnection())
                adopt(s);
        });
        return m_server->listen(QHostAddress::LocalHost, 0) ? m_server->serverPort() : 0;
    }

    Settings settings() const
    {
        QMutexLocker lock(&m_mutex);
        return m_settings;
    }
    template<typename F> void change(F f)
    {
        QMutexLocker lock(&m_mutex);
        f(m_settings);
    }

    std::atomic<int> modelsRequests{0};
    std::atomic<qint64> bytesSent{0};

private:
    void adopt(QTcpSocket *socket)
    {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        struct Pending
        {
            QByteArray head;
            bool answered = false; // one request per connection
        };
        auto pending = std::make_shared<Pending>();
        connect(socket, &QTcpSocket::readyRead, socket, [this, socket, pending] {
            if (pending->answered) {
                socket->readAll();
                return;
            }
            pending->head += socket->readAll();
            if (!pending->head.contains("\r\n\r\n"))
                return;
            // The body of a POST is not waited for: the answer does not depend on it.
            pending->answered = true;
            answer(socket, pending->head.left(pending->head.indexOf("\r\n")));
        });
    }

    void answer(QTcpSocket *socket, const QByteArray &requestLine)
    {
        const Settings s = settings();
        if (!requestLine.startsWith("GET /v1/models ")) {
            // One request per connection, so it says so: without it slp pools the connection,
            // and a request sent on it as it closes gets a 502 (a request written whole is
            // never re-sent), which under load made the scripted answers flaky.
            QByteArray head = s.head;
            const qsizetype statusEnd = head.indexOf("\r\n");
            if (statusEnd >= 0)
                head.insert(statusEnd + 2, "Connection: close\r\n");
            socket->write(head);
            writePieces(socket, s.pieces, s.pauseMs);
            return;
        }
        ++modelsRequests;
        switch (s.models) {
        case Models::Json:
            socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                          QByteArray::number(s.json.size()) + "\r\nConnection: close\r\n\r\n");
            socket->write(s.json);
            bytesSent += s.json.size();
            socket->disconnectFromHost();
            return;
        case Models::Huge:
            socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                          QByteArray::number(s.hugeBytes) + "\r\nConnection: close\r\n\r\n");
            stream(socket, s.hugeBytes, false);
            return;
        case Models::Endless:
            socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n");
            stream(socket, -1, true);
            return;
        }
    }

    // Writes `total` bytes of a model list that never closes its array (-1: without end), as
    // fast as the peer takes them.
    void stream(QTcpSocket *socket, qint64 total, bool chunked)
    {
        auto left = std::make_shared<qint64>(total);
        auto first = std::make_shared<bool>(true);
        const auto more = [this, socket, left, first, chunked] {
            while (socket->state() == QAbstractSocket::ConnectedState &&
                   socket->bytesToWrite() < kMaxQueued && *left != 0) {
                QByteArray piece;
                if (std::exchange(*first, false))
                    piece = R"({"object":"list","data":[)";
                while (piece.size() < kPiece)
                    piece += R"({"id":"endless-model-name","object":"model"},)";
                if (*left > 0) {
                    piece.truncate(std::min<qint64>(piece.size(), *left));
                    *left -= piece.size();
                }
                if (chunked)
                    piece = QByteArray::number(piece.size(), 16) + "\r\n" + piece + "\r\n";
                socket->write(piece);
                bytesSent += piece.size();
            }
            if (*left == 0)
                socket->disconnectFromHost();
        };
        connect(socket, &QTcpSocket::bytesWritten, socket, more);
        more();
    }

    void writePieces(QTcpSocket *socket, QList<QByteArray> pieces, int pauseMs)
    {
        if (pieces.isEmpty()) {
            socket->disconnectFromHost();
            return;
        }
        QPointer<QTcpSocket> alive(socket);
        QTimer::singleShot(pauseMs, socket, [this, alive, pieces, pauseMs]() mutable {
            if (!alive)
                return;
            alive->write(pieces.takeFirst());
            writePieces(alive, pieces, pauseMs);
        });
    }

    QTcpServer *m_server = new QTcpServer(this); // a child: it moves with the worker
    mutable QMutex m_mutex;
    Settings m_settings;
};

HostileUpstream::HostileUpstream() : m_thread(std::make_unique<QThread>())
{
    m_worker = new HostileUpstreamWorker;
    m_worker->moveToThread(m_thread.get());
    QObject::connect(m_thread.get(), &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread->start();
}

HostileUpstream::~HostileUpstream()
{
    m_thread->quit();
    m_thread->wait();
}

bool HostileUpstream::start()
{
    quint16 port = 0;
    QMetaObject::invokeMethod(
        m_worker, [this, &port] { port = m_worker->listen(); }, Qt::BlockingQueuedConnection);
    m_port = port;
    return port != 0;
}

quint16 HostileUpstream::port() const
{
    return m_port;
}

QString HostileUpstream::url() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

void HostileUpstream::setModels(const QByteArray &json)
{
    m_worker->change([&](HostileUpstreamWorker::Settings &s) {
        s.models = HostileUpstreamWorker::Models::Json;
        s.json = json;
    });
}

void HostileUpstream::setModelsHuge(qint64 bytes)
{
    m_worker->change([&](HostileUpstreamWorker::Settings &s) {
        s.models = HostileUpstreamWorker::Models::Huge;
        s.hugeBytes = bytes;
    });
}

void HostileUpstream::setModelsEndless()
{
    m_worker->change([&](HostileUpstreamWorker::Settings &s) {
        s.models = HostileUpstreamWorker::Models::Endless;
    });
}

void HostileUpstream::setAnswer(const QByteArray &head, const QList<QByteArray> &pieces,
                                int pauseMs)
{
    m_worker->change([&](HostileUpstreamWorker::Settings &s) {
        s.head = head;
        s.pieces = pieces;
        s.pauseMs = pauseMs;
    });
}

int HostileUpstream::modelsRequests() const
{
    return m_worker->modelsRequests;
}

qint64 HostileUpstream::bytesSent() const
{
    return m_worker->bytesSent;
}

QByteArray HostileUpstream::modelList(const QList<QString> &ids)
{
    QJsonArray data;
    for (const QString &id : ids)
        data.append(QJsonObject{{"id", id}, {"object", "model"}, {"owned_by", "vllm"}});
    return QJsonDocument(QJsonObject{{"object", "list"}, {"data", data}})
        .toJson(QJsonDocument::Compact);
}

QByteArray HostileUpstream::manyModels(int count)
{
    QByteArray out = R"({"object":"list","data":[)";
    for (int i = 0; i < count; ++i)
        out += (i ? ",{\"id\":\"m-" : "{\"id\":\"m-") + QByteArray::number(i) + "\"}";
    return out + "]}";
}

} // namespace slp::test
