#include "http/httpfront.h"

#include "http/clientconnection.h"
#include "http/requesthandler.h"

#include <QHttpServerRequest>
#include <QMetaEnum>
#include <QTcpSocket>

namespace slp {

namespace {
QByteArray methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get:
        return "GET";
    case QHttpServerRequest::Method::Put:
        return "PUT";
    case QHttpServerRequest::Method::Delete:
        return "DELETE";
    case QHttpServerRequest::Method::Post:
        return "POST";
    case QHttpServerRequest::Method::Head:
        return "HEAD";
    case QHttpServerRequest::Method::Options:
        return "OPTIONS";
    case QHttpServerRequest::Method::Patch:
        return "PATCH";
    case QHttpServerRequest::Method::Connect:
        return "CONNECT";
    case QHttpServerRequest::Method::Trace:
        return "TRACE";
    default:
        return "UNKNOWN";
    }
}

QByteArray clientAddress(const QHostAddress &address)
{
    bool mapped = false;
    const quint32 v4 = address.toIPv4Address(&mapped);
    return (mapped ? QHostAddress(v4) : address).toString().toLatin1();
}
} // namespace

HttpFront::HttpFront(RequestHandler &handler, QObject *parent)
    : QAbstractHttpServer(parent), m_handler(handler)
{}

bool HttpFront::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    ClientConnection *connection = ClientConnection::of(socket);
    if (!connection || connection->isRejected()) {
        return true; // already answered with an error and closing
    }
    RequestHead head = connection->takeHead();
    InboundRequest in;
    ResponseContext context;
    // Copy everything now: QtHttpServer reuses this request object for the next one.
    in.body = request.body();
    in.clientAddress = clientAddress(socket->peerAddress());
    if (head.state == RequestHead::State::Complete) {
        in.method = std::move(head.method);
        in.target = std::move(head.target);
        in.headers = std::move(head.headers);
        context.keepAlive = head.keepAlive;
        context.versionMinor = head.versionMinor;
    } else {
        in.method = methodName(request.method());
        in.target = request.url().toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority);
        in.headers = request.headers();
        const QByteArray connectionHeader = request.value("Connection").toLower();
        context.keepAlive = !connectionHeader.contains("close");
    }
    context.headRequest = in.method == "HEAD";
    ResponseWriter *writer = connection->openWriter(context);
    m_handler.handle(std::move(in), writer);
    return true;
}

void HttpFront::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest() answers every request itself.
}

} // namespace slp
