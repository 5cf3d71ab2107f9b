// SPDX-License-Identifier: GPL-3.0-or-later
#include "mockserver.h"

#include "multipartreply.h"
#include "payloads.h"
#include "wssession.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>
#include <QUrlQuery>

#include <QFile>

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <utility>

namespace slp::mock {

namespace {

constexpr qsizetype MaxRecords = 200;
constexpr qsizetype RecordBodyLimit = 1024 * 1024;
constexpr qint64 HighWater = 256 * 1024; // pause writing above this many unsent bytes
constexpr qint64 LargePiece = 64 * 1024;
const QByteArray LargeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

QByteArray randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    for (int i = 0; i < bytes; ++i)
        raw[i] = static_cast<char>(QRandomGenerator::global()->bounded(256));
    return raw.toHex();
}

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 301:
        return "Moved Permanently";
    case 302:
        return "Found";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Request Entity Too Large";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Status";
    }
}

bool bodyForbidden(int status, const QByteArray &method)
{
    return status == 204 || status == 304 || (status >= 100 && status < 200) || method == "HEAD";
}

int intHeader(const Request &r, QByteArrayView name, int fallback)
{
    bool ok = false;
    const int v = r.header(name).trimmed().toInt(&ok);
    return ok ? v : fallback;
}

bool flagHeader(const Request &r, QByteArrayView name)
{
    const QByteArray v = r.header(name).trimmed().toLower();
    return v == "1" || v == "true" || v == "yes";
}

QByteArray largeBody(qint64 offset, qint64 n)
{
    // Built once: the pattern repeats every 64 bytes, so any piece is a slice of one block.
    static const QByteArray block = [] {
        QByteArray b(LargePiece + LargeAlphabet.size(), Qt::Uninitialized);
        for (qsizetype i = 0; i < b.size(); ++i)
            b[i] = LargeAlphabet[i % LargeAlphabet.size()];
        return b;
    }();
    return block.mid(offset % LargeAlphabet.size(), n);
}

} // namespace

// ---------------------------------------------------------------------------------------
// MockServer

MockServer::MockServer(QStringList models, QByteArray idPrefix, QObject *parent)
    : QObject(parent), m_server(new QTcpServer(this)), m_models(std::move(models)),
      m_idPrefix(std::move(idPrefix)), m_created(QDateTime::currentSecsSinceEpoch())
{
    m_clock.start();
    // Load tests open thousands of connections at once; Qt's default backlog is 50.
    m_server->setListenBacklogSize(4096);
    m_server->setMaxPendingConnections(100000);
    connect(m_server, &QTcpServer::newConnection, this, [this] { onNewConnection(m_server); });
}

bool MockServer::listen(const QHostAddress &address, quint16 port)
{
    return m_server->listen(address, port);
}

bool MockServer::listenUnix(const QString &path, QString *error)
{
    const QByteArray name = QFile::encodeName(path);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (name.size() >= qsizetype(sizeof(address.sun_path))) {
        *error = QStringLiteral("path too long");
        return false;
    }
    std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
    ::unlink(name.constData());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0 ||
        ::listen(fd, 4096) != 0) {
        *error = qt_error_string(errno);
        if (fd >= 0)
            ::close(fd);
        return false;
    }
    auto *server = new QTcpServer(this);
    server->setMaxPendingConnections(100000);
    if (!server->setSocketDescriptor(fd)) {
        *error = server->errorString();
        ::close(fd);
        return false;
    }
    connect(server, &QTcpServer::newConnection, this, [this, server] { onNewConnection(server); });
    return true;
}

void MockServer::onNewConnection(QTcpServer *server)
{
    while (QTcpSocket *socket = server->nextPendingConnection()) {
        ++m_connectionsAccepted;
        ++m_connectionsOpen;
        new Connection(this, socket, m_nextConnectionId++); // parented to this
    }
}

QByteArray MockServer::newRequestId() const
{
    return m_idPrefix + randomHex(12);
}

qint64 MockServer::record(const Connection &conn, const Request &request)
{
    ++m_requests;
    RecordedRequest r;
    r.seq = m_nextSeq++;
    r.connectionId = conn.id();
    r.peerPort = conn.peerPort();
    r.request = request;
    r.arrivedMs = nowMs();
    m_records.append(std::move(r));
    while (m_records.size() > MaxRecords)
        m_records.removeFirst();
    return m_records.last().seq;
}

void MockServer::recordResponseBody(qint64 seq, const QByteArray &body)
{
    for (RecordedRequest &r : m_records) {
        if (r.seq == seq) {
            r.responseBody = body;
            r.responseRecorded = true;
        }
    }
}

void MockServer::peerClosed(qint64 connectionId)
{
    const qint64 now = nowMs();
    for (RecordedRequest &r : m_records)
        if (r.connectionId == connectionId && r.peerClosedMs < 0)
            r.peerClosedMs = now - r.arrivedMs;
}

void MockServer::connectionClosed()
{
    --m_connectionsOpen;
}

void MockServer::requestStarted()
{
    ++m_inFlight;
    m_maxInFlight = std::max(m_maxInFlight, m_inFlight);
}

void MockServer::requestFinished()
{
    --m_inFlight;
}

MockServer::Reply MockServer::modelsReply() const
{
    Reply reply;
    reply.delayMs = m_modelsDelayMs;
    reply.status = m_modelsStatus;
    if (m_modelsRawSet) {
        reply.body = m_modelsRaw;
        reply.contentType = "text/plain; charset=utf-8";
    } else if (m_modelsStatus != 200) {
        reply.body = errorBody(m_modelsStatus,
                               QStringLiteral("mock /v1/models status %1").arg(m_modelsStatus));
    } else {
        reply.body = modelsList(m_models, m_created);
    }
    return reply;
}

QByteArray MockServer::requestsJson(qint64 since) const
{
    QJsonArray out;
    for (const RecordedRequest &r : m_records) {
        if (r.seq <= since)
            continue;
        QJsonArray headers;
        for (const auto &h : r.request.headers)
            headers.append(QJsonArray{QString::fromLatin1(h.first), QString::fromUtf8(h.second)});
        QJsonObject o{
            {"seq", r.seq},
            {"connection", r.connectionId},
            {"peer_port", r.peerPort},
            {"method", QString::fromLatin1(r.request.method)},
            {"target", QString::fromUtf8(r.request.target)},
            {"version", QString::fromLatin1(r.request.version)},
            {"headers", headers},
            {"chunked", r.request.chunked},
            {"body_size", r.request.body.size()},
            {"body_sha256",
             QString::fromLatin1(
                 QCryptographicHash::hash(r.request.body, QCryptographicHash::Sha256).toHex())},
            {"arrived_ms", r.arrivedMs},
            {"peer_closed_ms",
             r.peerClosedMs < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(r.peerClosedMs)},
        };
        if (r.request.body.size() <= RecordBodyLimit)
            o.insert("body_b64", QString::fromLatin1(r.request.body.toBase64()));
        if (r.responseRecorded && r.responseBody.size() <= RecordBodyLimit)
            o.insert("response_b64", QString::fromLatin1(r.responseBody.toBase64()));
        out.append(o);
    }
    return QJsonDocument(out).toJson(QJsonDocument::Compact);
}

MockServer::Reply MockServer::handleControl(const Request &request)
{
    const QByteArray path = request.path();
    const bool get = request.method == "GET";
    const bool post = request.method == "POST";
    Reply reply;
    auto bad = [&](const QString &message) {
        reply.status = 400;
        reply.body = errorBody(400, message);
        return reply;
    };
    QJsonObject in;
    if (post && !request.body.trimmed().isEmpty()) {
        QJsonParseError err{};
        const QJsonDocument doc = QJsonDocument::fromJson(request.body, &err);
        if (!doc.isObject())
            return bad(QStringLiteral("control body must be a JSON object"));
        in = doc.object();
    }
    auto modelsJson = [&] {
        return QJsonDocument(QJsonObject{{"models", QJsonArray::fromStringList(m_models)}})
            .toJson(QJsonDocument::Compact);
    };
    auto statusJson = [&] {
        QJsonObject o{{"status", m_modelsStatus}, {"delay_ms", m_modelsDelayMs}};
        if (m_modelsRawSet)
            o.insert("raw", QString::fromUtf8(m_modelsRaw));
        return QJsonDocument(o).toJson(QJsonDocument::Compact);
    };

    if (path == "/__mock/models" && (get || post)) {
        if (post) {
            if (!in.value("models").isArray())
                return bad(QStringLiteral("want {\"models\":[...]}"));
            QStringList models;
            for (const QJsonValue &v : in.value("models").toArray())
                models << v.toString();
            m_models = models;
        }
        reply.body = modelsJson();
    } else if (path == "/__mock/models_status" && (get || post)) {
        if (post) {
            m_modelsStatus = in.value("status").toInt(200);
            m_modelsRawSet = in.contains("raw");
            m_modelsRaw = in.value("raw").toString().toUtf8();
            m_modelsDelayMs = in.value("delay_ms").toInt(0);
        }
        reply.body = statusJson();
    } else if (path == "/__mock/requests" && get) {
        const QUrlQuery q(QString::fromUtf8(request.query()));
        reply.body = requestsJson(q.queryItemValue("since").toLongLong());
    } else if (path == "/__mock/reset" && post) {
        // Sequence numbers keep counting so a test's `since` stays meaningful.
        m_records.clear();
        m_requests = 0;
        m_maxInFlight = m_inFlight;
        m_modelsStatus = 200;
        m_modelsRawSet = false;
        m_modelsRaw.clear();
        m_modelsDelayMs = 0;
        reply.body = "{\"ok\":true}";
    } else if (path == "/__mock/stats" && get) {
        reply.body = QJsonDocument(QJsonObject{{"connections_accepted", m_connectionsAccepted},
                                               {"connections_open", m_connectionsOpen},
                                               {"requests", m_requests},
                                               {"in_flight", m_inFlight},
                                               {"max_in_flight", m_maxInFlight},
                                               {"next_seq", m_nextSeq}})
                         .toJson(QJsonDocument::Compact);
    } else {
        reply.status = 404;
        reply.body =
            errorBody(404, QStringLiteral("unknown mock control %1 %2")
                               .arg(QString::fromLatin1(request.method), QString::fromUtf8(path)));
    }
    return reply;
}

// ---------------------------------------------------------------------------------------
// Connection

Connection::Connection(MockServer *server, QTcpSocket *socket, qint64 id)
    : QObject(server), m_server(server), m_socket(socket), m_timer(new QTimer(this)), m_id(id)
{
    m_socket->setParent(this);
    m_peerPort = m_socket->peerPort();
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, [this] {
        m_waiting = false;
        pump();
    });
    m_parser.onHead = [this](const wire::Head &h) {
        static_cast<wire::Head &>(m_request) = h;
        m_badVersion = h.version != "HTTP/1.1" && h.version != "HTTP/1.0";
        // A client that waits for 100 Continue before its body gets it.
        const bool bodyFollows = h.chunked || h.contentLength > 0;
        if (bodyFollows && h.version == "HTTP/1.1" &&
            h.header("expect").trimmed().toLower() == "100-continue")
            m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    };
    m_parser.onBody = [this](QByteArrayView piece) { m_request.body.append(piece); };
    m_parser.onMessage = [this] { m_requestDone = true; };
    connect(m_socket, &QTcpSocket::readyRead, this, &Connection::onReadyRead);
    connect(m_socket, &QTcpSocket::bytesWritten, this, [this] {
        if (!m_waiting)
            pump();
    });
    connect(m_socket, &QTcpSocket::disconnected, this, &Connection::onDisconnected);
    if (m_socket->bytesAvailable() > 0)
        QTimer::singleShot(0, this, &Connection::onReadyRead);
}

void Connection::onReadyRead()
{
    if (m_gone)
        return;
    m_in += m_socket->readAll();
    if (!m_busy)
        processInput();
}

void Connection::onDisconnected()
{
    if (m_gone)
        return;
    m_gone = true;
    if (!m_closedByUs)
        m_server->peerClosed(m_id);
    if (m_countedInFlight) {
        m_countedInFlight = false;
        m_server->requestFinished();
    }
    m_server->connectionClosed();
    m_timer->stop();
    m_steps.clear();
    deleteLater();
}

void Connection::closeByUs(bool reset)
{
    if (m_gone)
        return;
    m_closedByUs = true;
    m_steps.clear();
    m_timer->stop();
    if (reset) {
        // SO_LINGER 0 turns close() into a TCP RST: a real "connection reset by peer".
        const qintptr fd = m_socket->socketDescriptor();
        if (fd >= 0) {
            struct linger lg
            {
                1, 0
            };
            ::setsockopt(static_cast<int>(fd), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        m_socket->abort();
    } else {
        m_socket->disconnectFromHost(); // sends what is buffered, then FIN
    }
    if (m_socket->state() == QAbstractSocket::UnconnectedState)
        onDisconnected();
}

void Connection::processInput()
{
    while (!m_busy && !m_gone && !m_in.isEmpty()) {
        // Parses up to the end of one request: the next stays in m_in until this one is answered.
        m_in.remove(0, m_parser.feed(m_in));
        if (m_parser.failed() || m_badVersion) {
            int status = 400;
            QString message = QStringLiteral("bad request: %1").arg(m_parser.error());
            if (m_badVersion) {
                status = 505;
                message = QStringLiteral("unsupported HTTP version");
            } else if (m_parser.failure() == wire::Parser::Failure::HeadTooLarge) {
                status = 431;
                message = QStringLiteral("request head too large");
            }
            const QByteArray body = errorBody(status, message);
            m_socket->write(wire::responseHead(status, reasonPhrase(status),
                                               {{"content-type", "application/json"},
                                                {"content-length", QByteArray::number(body.size())},
                                                {"connection", "close"}}) +
                            body);
            closeByUs(false);
            return;
        }
        if (std::exchange(m_requestDone, false)) {
            dispatch(std::exchange(m_request, Request()));
            return;
        }
    }
}

Connection::Knobs Connection::parseKnobs(const Request &r)
{
    Knobs k;
    k.delayMs = intHeader(r, "x-mock-delay-ms", 0);
    k.status = intHeader(r, "x-mock-status", 0);
    k.echo = flagHeader(r, "x-mock-echo");
    k.gzip = flagHeader(r, "x-mock-gzip");
    k.closeDelimited = flagHeader(r, "x-mock-close-delimited");
    k.resetBeforeHead = flagHeader(r, "x-mock-reset-before-head");
    k.noDone = flagHeader(r, "x-mock-no-done");
    k.dropReset = flagHeader(r, "x-mock-drop-reset");
    bool ok = false;
    const qint64 large = r.header("x-mock-large-response").trimmed().toLongLong(&ok);
    k.large = ok ? large : -1;
    k.events = std::max(0, intHeader(r, "x-mock-events", 5));
    k.reasoningEvents = std::max(0, intHeader(r, "x-mock-reasoning-events", 2));
    k.toolCalls = std::max(0, intHeader(r, "x-mock-tool-calls", 0));
    k.intervalMs = std::max(0, intHeader(r, "x-mock-event-interval-ms", 0));
    k.pauseAfter = intHeader(r, "x-mock-pause-after", -1);
    k.pauseMs = std::max(0, intHeader(r, "x-mock-pause-ms", 0));
    k.pauseMidEvent = flagHeader(r, "x-mock-pause-mid-event");
    k.bodyPauseMs = std::max(0, intHeader(r, "x-mock-body-pause-ms", 0));
    k.dropAfter = intHeader(r, "x-mock-drop-after", -1);
    k.errorAfter = intHeader(r, "x-mock-stream-error-after", -1);
    k.ignoreStream = flagHeader(r, "x-mock-ignore-stream");
    k.headers = r.values("x-mock-header");
    return k;
}

QByteArray Connection::head(int status, const QByteArray &requestId, const QList<QByteArray> &extra,
                            const Request &request) const
{
    QByteArray h = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    h += "date: " +
         QLocale::c()
             .toString(QDateTime::currentDateTimeUtc(), "ddd, dd MMM yyyy hh:mm:ss")
             .toLatin1() +
         " GMT\r\n";
    h += "server: mock-upstream\r\n";
    for (const QByteArray &e : extra)
        h += e + "\r\n";
    h += "x-request-id: " + requestId + "\r\n";
    for (const QByteArray &e : m_knobs.headers)
        h += e + "\r\n";
    if (!m_keepAlive)
        h += "connection: close\r\n";
    else if (request.version == "HTTP/1.0")
        h += "connection: keep-alive\r\n";
    h += "\r\n";
    return h;
}

void Connection::dispatch(Request request)
{
    m_busy = true;
    m_keepAlive = request.keepAlive;
    const QByteArray requestId = m_server->newRequestId();
    const QByteArray path = request.path();

    m_recordSeq = 0;
    if (path.startsWith("/__mock/")) {
        m_knobs = Knobs();
        const MockServer::Reply reply = m_server->handleControl(request);
        respondSimple(request, requestId, reply.status, reply.contentType, reply.body, 0);
        return;
    }

    m_recordSeq = m_server->record(*this, request);
    m_server->requestStarted();
    m_countedInFlight = true;
    m_knobs = parseKnobs(request);

    if (m_knobs.resetBeforeHead) {
        closeByUs(true);
        return;
    }
    if (m_knobs.closeDelimited)
        m_keepAlive = false;
    if (!m_server->authorized(request)) {
        respondSimple(request, requestId, 401, "application/json", "{\"error\":\"Unauthorized\"}",
                      0);
        return;
    }
    if (path == "/v1/realtime" && request.method == "GET" &&
        request.header("upgrade").toLower() == "websocket") {
        upgradeToWebSocket(request, requestId);
        return;
    }

    const int delay = m_knobs.delayMs;
    if (m_knobs.status > 0) {
        respondSimple(
            request, requestId, m_knobs.status, "application/json",
            errorBody(m_knobs.status, QStringLiteral("mock status %1").arg(m_knobs.status)), delay,
            m_knobs.gzip);
        return;
    }
    if (m_knobs.echo) {
        respondSimple(request, requestId, 200, "application/json", request.body, delay,
                      m_knobs.gzip);
        return;
    }
    if (m_knobs.large >= 0) {
        if (delay > 0)
            m_steps.append({Step::Wait, {}, delay, false});
        const bool chunked = false;
        QList<QByteArray> extra{"content-type: application/octet-stream"};
        if (!m_knobs.closeDelimited)
            extra << "content-length: " + QByteArray::number(m_knobs.large);
        m_steps.append({Step::Write, head(200, requestId, extra, request), 0, false});
        m_largeOffset = 0;
        if (m_knobs.dropAfter >= 0 && m_knobs.dropAfter < m_knobs.large) {
            m_steps.append({Step::Large, {}, m_knobs.dropAfter, chunked});
            m_steps.append({Step::Drop, {}, 0, false});
        } else {
            m_steps.append({Step::Large, {}, m_knobs.large, chunked});
            if (m_knobs.closeDelimited)
                m_steps.append({Step::Close, {}, 0, false});
            m_steps.append({Step::Finish, {}, 0, false});
        }
        pump();
        return;
    }

    if (path == "/v1/models" || path == "/models") {
        if (request.method != "GET") {
            respondSimple(request, requestId, 405, "application/json",
                          "{\"detail\":\"Method Not Allowed\"}", delay);
            return;
        }
        const MockServer::Reply reply = m_server->modelsReply();
        respondSimple(request, requestId, reply.status, reply.contentType, reply.body,
                      delay + reply.delayMs, m_knobs.gzip);
        return;
    }
    if (path == "/health" && request.method == "GET") {
        respondSimple(request, requestId, 200, "application/json", {}, delay);
        return;
    }
    // vLLM's own paths outside /v1/, each with a model in its body.
    static const QList<QByteArray> kOwnPaths = {"/tokenize", "/detokenize", "/v2/rerank", "/rerank",
                                                "/score",    "/pooling",    "/classify"};
    if ((path.startsWith("/v1/") || kOwnPaths.contains(path)) && request.method == "POST") {
        respondGenerated(request, requestId);
        return;
    }
    respondSimple(request, requestId, 404, "application/json", "{\"detail\":\"Not Found\"}", delay);
}

bool MockServer::authorized(const Request &request) const
{
    if (m_apiKey.isEmpty() || request.path() == "/health")
        return true;
    int given = 0;
    bool right = false;
    for (const auto &[name, value] : request.headers) {
        if (name.compare("authorization", Qt::CaseInsensitive) == 0) {
            ++given;
            right = value == "Bearer " + m_apiKey;
        }
    }
    return given == 1 && right;
}

// A Realtime-like WebSocket session (wssession.h) on this connection, or a 403 with
// --ws-refuse, or a 400 for a handshake RFC 6455 does not allow.
void Connection::upgradeToWebSocket(const Request &request, const QByteArray &requestId)
{
    const QByteArray key = request.header("sec-websocket-key");
    if (m_server->refusesWebSockets() || key.isEmpty() ||
        request.header("sec-websocket-version") != "13") {
        m_keepAlive = false;
        const int status = m_server->refusesWebSockets() ? 403 : 400;
        respondSimple(request, requestId, status, "application/json",
                      errorBody(status, QStringLiteral("mock refuses the upgrade")), 0);
        return;
    }
    QList<QByteArray> extra{"upgrade: websocket", "connection: Upgrade",
                            "sec-websocket-accept: " + ws::acceptFor(key)};
    const QByteArray protocols = request.header("sec-websocket-protocol");
    if (!protocols.isEmpty())
        extra << "sec-websocket-protocol: " + protocols.split(',').first().trimmed();
    m_socket->write(head(101, requestId, extra, request));
    // The socket leaves HTTP: the session reads it from now on; this connection only still
    // hears its end (onDisconnected), for the server's counts.
    disconnect(m_socket, &QTcpSocket::readyRead, this, nullptr);
    const QUrlQuery query(QString::fromUtf8(request.query()));
    new WsSession(m_socket, query.queryItemValue("model", QUrl::FullyDecoded).toUtf8(),
                  request.target, std::exchange(m_in, {})); // a Qt child of the socket
}

void Connection::respondGenerated(const Request &request, const QByteArray &requestId)
{
    const int delay = m_knobs.delayMs;
    if (isMultipart(request)) {
        const MultipartReply reply =
            multipartReply(request, m_server->models(), QDateTime::currentSecsSinceEpoch());
        respondSimple(request, requestId, reply.status, "application/json", reply.body, delay);
        return;
    }
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &err);
    if (!doc.isObject()) {
        respondSimple(request, requestId, 400, "application/json",
                      errorBody(400, QStringLiteral("mock: body is not a JSON object")), delay);
        return;
    }
    const QJsonObject body = doc.object();
    if (!body.value("model").isString()) {
        respondSimple(request, requestId, 400, "application/json",
                      errorBody(400, QStringLiteral("mock: \"model\" missing")), delay);
        return;
    }
    const QString model = body.value("model").toString();
    if (!m_server->models().isEmpty() && !m_server->models().contains(model)) {
        respondSimple(request, requestId, 404, "application/json",
                      errorBody(404, QStringLiteral("The model `%1` does not exist.").arg(model)),
                      delay);
        return;
    }

    const QByteArray path = request.path();
    Generation g;
    g.model = model;
    g.path = path;
    g.created = QDateTime::currentSecsSinceEpoch();
    g.contentEvents = m_knobs.events;
    g.reasoningEvents = m_knobs.reasoningEvents;
    g.toolCalls = m_knobs.toolCalls;
    g.promptTokens = std::max<int>(1, static_cast<int>(request.body.size() / 4));
    if (path.endsWith("/chat/completions")) {
        g.endpoint = Endpoint::Chat;
        g.id = "chatcmpl-" + requestId.right(24);
    } else if (path.endsWith("/completions")) {
        g.endpoint = Endpoint::Completion;
        g.id = "cmpl-" + requestId.right(24);
        g.reasoningEvents = 0;
        g.toolCalls = 0;
    } else if (path.endsWith("/embeddings")) {
        g.endpoint = Endpoint::Embedding;
        g.id = "embd-" + requestId.right(24);
    } else {
        g.endpoint = Endpoint::Other;
        g.id = "resp-" + requestId.right(24);
    }

    // X-Mock-Ignore-Stream: a backend that ignores "stream": true and answers JSON.
    const bool stream = body.value("stream").toBool(false) && g.endpoint != Endpoint::Embedding &&
                        !m_knobs.ignoreStream;
    if (!stream) {
        qint64 dropBytes = m_knobs.dropAfter;
        // Like a real server, a non-streaming answer comes when the whole generation is done:
        // as long as the same request would take to stream (interval per event, plus a pause).
        int generation = 0;
        if (g.endpoint != Endpoint::Embedding && (m_knobs.intervalMs > 0 || m_knobs.pauseMs > 0)) {
            const auto events = streamEvents(g).size();
            generation =
                int(events) * m_knobs.intervalMs + (m_knobs.pauseAfter >= 0 ? m_knobs.pauseMs : 0);
        }
        respondSimple(request, requestId, 200, "application/json", fullResponse(g),
                      delay + generation, m_knobs.gzip, dropBytes);
        return;
    }

    if (g.endpoint == Endpoint::Other)
        g.endpoint = Endpoint::Chat;
    QList<QByteArray> events = streamEvents(g);
    if (m_knobs.noDone)
        events.removeLast();
    if (m_knobs.errorAfter >= 0 && m_knobs.errorAfter < events.size()) {
        events = events.mid(0, m_knobs.errorAfter);
        events << "data: " +
                      errorBody(500, QStringLiteral("mock in-band error"),
                                QStringLiteral("InternalServerError")) +
                      "\n\n";
        if (!m_knobs.noDone)
            events << "data: [DONE]\n\n";
    }

    // An HTTP/1.0 client cannot take chunked encoding: delimit the stream by closing.
    if (request.version == "HTTP/1.0") {
        m_knobs.closeDelimited = true;
        m_keepAlive = false;
    }
    const bool chunked = !m_knobs.closeDelimited;
    QList<QByteArray> extra{"content-type: text/event-stream; charset=utf-8"};
    if (chunked)
        extra << "transfer-encoding: chunked";
    if (delay > 0)
        m_steps.append({Step::Wait, {}, delay, false});
    QByteArray pending = head(200, requestId, extra, request);
    QByteArray sent; // the body as planned, for the record
    const auto frame = [chunked](QByteArrayView bytes) {
        return chunked ? wire::chunk(bytes) : bytes.toByteArray();
    };
    for (qsizetype i = 0; i < events.size(); ++i) {
        if (i == m_knobs.dropAfter)
            break;
        // X-Mock-Pause-Mid-Event: the pause splits event pauseAfter in two halves (its own
        // chunks), so a relay sits inside a partly sent event for the whole pause.
        const bool split = m_knobs.pauseMidEvent && i == m_knobs.pauseAfter && m_knobs.pauseMs > 0;
        if (i > 0) {
            qint64 gap = m_knobs.intervalMs;
            if (i == m_knobs.pauseAfter && !split)
                gap += m_knobs.pauseMs;
            if (gap > 0) {
                m_steps.append({Step::Write, pending, 0, false});
                pending.clear();
                m_steps.append({Step::Wait, {}, gap, false});
            }
        }
        sent += events[i];
        if (split) {
            const qsizetype half = events[i].size() / 2;
            m_steps.append({Step::Write, pending + frame(events[i].left(half)), 0, false});
            pending.clear();
            m_steps.append({Step::Wait, {}, m_knobs.pauseMs, false});
            pending += frame(events[i].mid(half));
            continue;
        }
        pending += frame(events[i]);
    }
    m_server->recordResponseBody(m_recordSeq, sent);
    if (m_knobs.dropAfter >= 0 && m_knobs.dropAfter < events.size()) {
        if (m_knobs.pauseAfter == m_knobs.dropAfter && m_knobs.pauseMs > 0) {
            m_steps.append({Step::Write, pending, 0, false});
            pending.clear();
            m_steps.append({Step::Wait, {}, m_knobs.pauseMs, false});
        }
        m_steps.append({Step::Write, pending, 0, false});
        m_steps.append({Step::Drop, {}, 0, false});
    } else {
        if (chunked)
            pending += wire::LastChunk;
        m_steps.append({Step::Write, pending, 0, false});
        if (!chunked)
            m_steps.append({Step::Close, {}, 0, false});
        m_steps.append({Step::Finish, {}, 0, false});
    }
    pump();
}

void Connection::respondSimple(const Request &request, const QByteArray &requestId, int status,
                               const QByteArray &contentType, const QByteArray &body, int delayMs,
                               bool gzip, qint64 dropAfterBytes)
{
    QList<QByteArray> extra;
    QByteArray payload = body;
    const bool noBody = bodyForbidden(status, request.method);
    if (noBody)
        payload.clear();
    if (!noBody) {
        extra << "content-type: " + contentType;
        if (gzip) {
            payload = gzipStored(body);
            extra << "content-encoding: gzip";
        }
        if (!m_knobs.closeDelimited)
            extra << "content-length: " + QByteArray::number(payload.size());
    }
    if (delayMs > 0)
        m_steps.append({Step::Wait, {}, delayMs, false});
    const QByteArray h = head(status, requestId, extra, request);
    m_server->recordResponseBody(m_recordSeq, payload);
    if (dropAfterBytes >= 0 && dropAfterBytes < payload.size()) {
        m_steps.append({Step::Write, h + payload.left(dropAfterBytes), 0, false});
        m_steps.append({Step::Drop, {}, 0, false});
        pump();
        return;
    }
    if (m_knobs.bodyPauseMs > 0 && payload.size() > 1) {
        // X-Mock-Body-Pause-Ms: the head and half the body, a pause, then the rest.
        const qsizetype half = payload.size() / 2;
        m_steps.append({Step::Write, h + payload.left(half), 0, false});
        m_steps.append({Step::Wait, {}, m_knobs.bodyPauseMs, false});
        m_steps.append({Step::Write, payload.mid(half), 0, false});
    } else {
        m_steps.append({Step::Write, h + payload, 0, false});
    }
    if (m_knobs.closeDelimited)
        m_steps.append({Step::Close, {}, 0, false});
    m_steps.append({Step::Finish, {}, 0, false});
    pump();
}

void Connection::pump()
{
    // Bounded: each pass writes one step or returns to wait for a timer or bytesWritten.
    while (!m_steps.isEmpty() && !m_gone && !m_waiting) {
        if (m_socket->bytesToWrite() > HighWater)
            return;
        Step &step = m_steps.first();
        switch (step.kind) {
        case Step::Write:
            m_socket->write(step.data);
            m_steps.removeFirst();
            break;
        case Step::Wait:
            m_waiting = true;
            m_timer->start(static_cast<int>(step.amount));
            m_steps.removeFirst();
            return;
        case Step::Large: {
            const qint64 n = std::min(step.amount, LargePiece);
            if (n > 0) {
                m_socket->write(largeBody(m_largeOffset, n));
                m_largeOffset += n;
                step.amount -= n;
            }
            if (step.amount <= 0)
                m_steps.removeFirst();
            break;
        }
        case Step::Drop:
            // Let what was promised reach the wire, then cut without the body's end.
            if (m_socket->bytesToWrite() > 0) {
                m_socket->flush();
                if (m_socket->bytesToWrite() > 0)
                    return;
            }
            closeByUs(m_knobs.dropReset);
            return;
        case Step::Close:
            closeByUs(false);
            return;
        case Step::Finish:
            m_steps.removeFirst();
            finishResponse();
            return;
        }
    }
}

void Connection::finishResponse()
{
    if (m_countedInFlight) {
        m_countedInFlight = false;
        m_server->requestFinished();
    }
    m_knobs = Knobs();
    if (!m_keepAlive) {
        closeByUs(false);
        return;
    }
    m_busy = false;
    // Next pipelined request, if any, after this call stack unwinds.
    QTimer::singleShot(0, this, [this] {
        if (!m_busy && !m_gone)
            processInput();
    });
}

} // namespace slp::mock
