// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/unixprobe.h"

#include "discovery/modellist.h"
#include "wire/http1.h"

#include <QLocalSocket>
#include <QTimer>

#include <optional>

namespace slp {

namespace {
constexpr qint64 kMaxHeadBytes = 64 * 1024;
constexpr qint64 kReadBuffer = 64 * 1024;

// The body of a chunked answer, or nullopt when its framing is broken or unfinished.
std::optional<QByteArray> dechunk(QByteArrayView in)
{
    QByteArray out;
    qsizetype pos = 0;
    while (true) {
        const qsizetype eol = in.indexOf("\r\n", pos);
        if (eol < 0)
            return std::nullopt;
        bool ok = false;
        const QByteArrayView sizeText = in.sliced(pos, eol - pos);
        const qsizetype semi = sizeText.indexOf(';'); // chunk extensions are ignored
        const qint64 size =
            (semi < 0 ? sizeText : sizeText.first(semi)).trimmed().toLongLong(&ok, 16);
        if (!ok || size < 0 || size > kMaxModelListBytes || eol + 2 + size + 2 > in.size())
            return std::nullopt;
        if (size == 0)
            return out; // trailers, if any, are not needed
        out += in.sliced(eol + 2, size);
        if (out.size() > kMaxModelListBytes)
            return std::nullopt;
        pos = eol + 2 + size + 2;
    }
}
} // namespace

UnixProbe::UnixProbe(QObject *parent) : QObject(parent)
{}

UnixProbe::~UnixProbe()
{
    abort();
}

void UnixProbe::start(const QString &path, const QByteArray &userAgent)
{
    m_socket = new QLocalSocket(this);
    m_socket->setReadBufferSize(kReadBuffer); // what Qt reads ahead of us, as for the TCP probe
    connect(m_socket, &QLocalSocket::readyRead, this, &UnixProbe::onData);
    connect(m_socket, &QLocalSocket::disconnected, this, &UnixProbe::onClosed);
    connect(m_socket, &QLocalSocket::errorOccurred, this, [this](QLocalSocket::LocalSocketError e) {
        if (e == QLocalSocket::PeerClosedError)
            return onClosed();
        // Qt words a missing file "Invalid name": say what an operator checks.
        const QString why =
            e == QLocalSocket::ServerNotFoundError      ? QStringLiteral("no such socket")
            : e == QLocalSocket::ConnectionRefusedError ? QStringLiteral("connection refused")
                                                        : m_socket->errorString();
        finish(QStringLiteral("connect to unix:%1: %2").arg(m_socket->serverName(), why));
    });
    const QByteArray request = "GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAccept: "
                               "application/json\r\nUser-Agent: " +
                               userAgent + "\r\nConnection: close\r\n\r\n";
    connect(m_socket, &QLocalSocket::connected, this,
            [this, request] { m_socket->write(request); });
    m_socket->connectToServer(path); // a Unix socket connects (or fails) at once
}

void UnixProbe::abort()
{
    m_cancelled = true;
    stopSocket();
}

void UnixProbe::stopSocket()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

void UnixProbe::onData()
{
    if (m_done || m_cancelled)
        return;
    m_raw += m_socket->readAll();
    if (m_raw.size() > kMaxModelListBytes + kMaxHeadBytes) {
        m_overLimit = true;
        finish(QStringLiteral("model list larger than %1 bytes: stopped reading")
                   .arg(kMaxModelListBytes));
    }
}

void UnixProbe::onClosed()
{
    if (m_done || m_cancelled)
        return;
    m_raw += m_socket->readAll();
    finish(parseAnswer() ? QString() : m_failure);
}

bool UnixProbe::parseAnswer()
{
    const qsizetype headEnd = m_raw.indexOf("\r\n\r\n");
    const auto malformed = [this](const QString &why) {
        m_failure = QStringLiteral("malformed answer: ") + why;
        return false;
    };
    if (headEnd < 0)
        return malformed(m_raw.isEmpty() ? QStringLiteral("closed before a response")
                                         : QStringLiteral("no end of head"));
    const QList<QByteArray> lines = m_raw.first(headEnd).split('\n');
    const QList<QByteArray> statusLine = lines.first().trimmed().split(' ');
    bool ok = false;
    m_status = statusLine.size() >= 2 && statusLine[0].startsWith("HTTP/1.")
                   ? statusLine[1].toInt(&ok)
                   : 0;
    if (!ok)
        return malformed(QStringLiteral("no status line"));
    HeaderList headers;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0)
            headers.append({lines[i].first(colon).trimmed(), lines[i].sliced(colon + 1).trimmed()});
    }
    const QByteArray rest = m_raw.sliced(headEnd + 4);
    if (headerValue(headers, "transfer-encoding").toLower().contains("chunked")) {
        const auto body = dechunk(rest);
        if (!body)
            return malformed(QStringLiteral("broken chunked body"));
        m_body = *body;
        return true;
    }
    const QByteArray length = headerValue(headers, "content-length");
    const qint64 declared = length.isEmpty() ? -1 : length.trimmed().toLongLong(&ok);
    if (!length.isEmpty() && (!ok || declared > rest.size()))
        return malformed(QStringLiteral("body shorter than its Content-Length"));
    m_body = declared < 0 ? rest : rest.first(declared);
    return true;
}

void UnixProbe::finish(const QString &failure)
{
    if (m_done || m_cancelled)
        return;
    m_done = true;
    m_failure = failure;
    stopSocket();
    // From the event loop: the caller may delete this probe in its slot.
    QTimer::singleShot(0, this, [this] {
        if (!m_cancelled)
            Q_EMIT finished();
    });
}

} // namespace slp
