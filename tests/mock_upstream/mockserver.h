// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/parser.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QTcpServer>

class QTcpSocket;
class QTimer;

namespace slp::mock {

class Connection;

using HeaderList = wire::HeaderList;

// One HTTP/1.x request as it arrived: the head (headers in order, repeats kept) and the
// de-chunked body.
struct Request : wire::Head
{
    QByteArray body;
};

// What tests read back from GET /__mock/requests.
struct RecordedRequest
{
    qint64 seq = 0;
    qint64 connectionId = 0;
    quint16 peerPort = 0;
    Request request;
    qint64 arrivedMs = 0;     // on the server's clock
    qint64 peerClosedMs = -1; // -1: still open, or closed by us
    // The body bytes of the answer as planned (de-chunked), for byte-exact relay checks.
    QByteArray responseBody;
    bool responseRecorded = false;
};

// A vLLM-like OpenAI server with knobs for failure tests. All state lives on one thread;
// every delay is a timer, so thousands of connections can wait at once.
class MockServer : public QObject
{
    Q_OBJECT
public:
    MockServer(QStringList models, QByteArray idPrefix, QObject *parent = nullptr);

    bool listen(const QHostAddress &address, quint16 port);
    // Also serves on a Unix socket at `path` (replacing a stale file), beside the TCP port
    // the control API stays on. The accepted descriptors are wrapped in QTcpSockets.
    bool listenUnix(const QString &path, QString *error);
    quint16 port() const { return m_server->serverPort(); }
    QString errorString() const { return m_server->errorString(); }

    // Used by Connection.
    qint64 nowMs() const { return m_clock.elapsed(); }
    QByteArray newRequestId() const;
    const QByteArray &idPrefix() const { return m_idPrefix; }
    qint64 record(const Connection &conn, const Request &request);
    void recordResponseBody(qint64 seq, const QByteArray &body);
    void peerClosed(qint64 connectionId);
    void connectionClosed();
    void requestStarted();
    void requestFinished();

    // Built-in endpoints; returns the whole response to write.
    struct Reply
    {
        int status = 200;
        QByteArray contentType = "application/json";
        QByteArray body;
        int delayMs = 0;
    };
    Reply handleControl(const Request &request);
    Reply modelsReply() const;
    const QStringList &models() const { return m_models; }
    // --ws-refuse: every WebSocket upgrade is answered 403.
    void setRefusesWebSockets(bool refuse) { m_refusesWebSockets = refuse; }
    bool refusesWebSockets() const { return m_refusesWebSockets; }
    // vLLM's --api-key: every request but /health needs exactly one
    // "Authorization: Bearer KEY", or it gets a 401 (empty: no key asked).
    void setApiKey(const QByteArray &key) { m_apiKey = key; }
    bool authorized(const Request &request) const;

private:
    void onNewConnection(QTcpServer *server);
    QByteArray requestsJson(qint64 since) const;

    QTcpServer *m_server;
    QElapsedTimer m_clock;
    QStringList m_models;
    QByteArray m_idPrefix;
    qint64 m_created;

    // /v1/models knob (POST /__mock/models_status).
    int m_modelsStatus = 200;
    QByteArray m_modelsRaw;
    bool m_modelsRawSet = false;
    int m_modelsDelayMs = 0;
    bool m_refusesWebSockets = false;
    QByteArray m_apiKey;

    QList<RecordedRequest> m_records;
    qint64 m_nextSeq = 1;
    qint64 m_nextConnectionId = 1;
    qint64 m_connectionsAccepted = 0;
    qint64 m_connectionsOpen = 0;
    qint64 m_requests = 0;
    qint64 m_inFlight = 0;
    qint64 m_maxInFlight = 0;
};

// One client connection: parses requests in order and writes one response at a time as a
// queue of steps (bytes, waits, large generated bodies, closes), driven by timers and
// bytesWritten so nothing blocks and big bodies are never buffered whole.
class Connection : public QObject
{
    Q_OBJECT
public:
    Connection(MockServer *server, QTcpSocket *socket, qint64 id);

    qint64 id() const { return m_id; }
    quint16 peerPort() const { return m_peerPort; }

private:
    struct Step
    {
        enum Kind
        {
            Write,
            Wait,
            Large,
            Drop,
            Close,
            Finish
        };
        Kind kind = Write;
        QByteArray data;
        qint64 amount = 0; // Wait: ms; Large: bytes left
        bool chunked = false;
    };

    // Per-request knobs from X-Mock-* request headers.
    struct Knobs
    {
        int delayMs = 0;
        int status = 0;
        bool echo = false;
        bool gzip = false;
        bool closeDelimited = false;
        bool resetBeforeHead = false;
        bool noDone = false;
        bool ignoreStream = false; // answer JSON even when the request asked to stream
        bool dropReset = false;
        qint64 large = -1;
        int events = 5;
        int reasoningEvents = 2;
        int toolCalls = 0;
        int intervalMs = 0;
        int pauseAfter = -1;
        int pauseMs = 0;
        bool pauseMidEvent = false; // the pause falls inside event pauseAfter, not before it
        int bodyPauseMs = 0;        // a whole (JSON) answer pauses this long halfway
        int dropAfter = -1;
        int errorAfter = -1;
        QList<QByteArray> headers;
    };
    static Knobs parseKnobs(const Request &request);

    void onReadyRead();
    void onDisconnected();
    void processInput();
    void dispatch(Request request);
    void respondGenerated(const Request &request, const QByteArray &requestId);
    void upgradeToWebSocket(const Request &request, const QByteArray &requestId);
    void respondSimple(const Request &request, const QByteArray &requestId, int status,
                       const QByteArray &contentType, const QByteArray &body, int delayMs,
                       bool gzip = false, qint64 dropAfterBytes = -1);
    QByteArray head(int status, const QByteArray &requestId, const QList<QByteArray> &extra,
                    const Request &request) const;
    void pump();
    void finishResponse();
    void closeByUs(bool reset);

    MockServer *m_server;
    QTcpSocket *m_socket;
    QTimer *m_timer;
    qint64 m_id;
    quint16 m_peerPort = 0;
    QByteArray m_in;
    wire::Parser m_parser{wire::Parser::Kind::Request};
    Request m_request;          // the one being parsed
    bool m_requestDone = false; // m_request is complete: answer it
    bool m_badVersion = false;
    bool m_busy = false;
    bool m_countedInFlight = false;
    bool m_keepAlive = true;
    bool m_closedByUs = false;
    bool m_gone = false;
    bool m_waiting = false;
    qint64 m_largeOffset = 0;
    QList<Step> m_steps;
    Knobs m_knobs;
    qint64 m_recordSeq = 0; // the record of the request being answered (0: a control request)
};

} // namespace slp::mock
