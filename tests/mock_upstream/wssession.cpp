// SPDX-License-Identifier: GPL-3.0-or-later
#include "wssession.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtEndian>

namespace slp::mock {

namespace ws {

Parse takeFrame(QByteArray &buffer, Frame *frame, QString *error, qint64 maxPayload)
{
    if (buffer.size() < 2)
        return Parse::NeedMore;
    const auto *b = reinterpret_cast<const uchar *>(buffer.constData());
    if (b[0] & 0x70) {
        *error = QStringLiteral("reserved bits set (no extension was agreed)");
        return Parse::Error;
    }
    if (!(b[1] & 0x80)) {
        *error = QStringLiteral("a client frame without a mask");
        return Parse::Error;
    }
    qint64 length = b[1] & 0x7f;
    qsizetype at = 2;
    if (length == 126) {
        if (buffer.size() < 4)
            return Parse::NeedMore;
        length = qFromBigEndian<quint16>(b + 2);
        at = 4;
    } else if (length == 127) {
        if (buffer.size() < 10)
            return Parse::NeedMore;
        length = qint64(qFromBigEndian<quint64>(b + 2));
        at = 10;
    }
    if (length < 0 || length > maxPayload) {
        *error = QStringLiteral("a frame of %1 bytes").arg(length);
        return Parse::Error;
    }
    if (buffer.size() < at + 4 + length)
        return Parse::NeedMore;
    const uchar *mask = b + at;
    at += 4;
    frame->fin = b[0] & 0x80;
    frame->opcode = b[0] & 0x0f;
    frame->payload = buffer.mid(at, length);
    for (qsizetype i = 0; i < frame->payload.size(); ++i)
        frame->payload[i] = char(frame->payload[i] ^ mask[i % 4]);
    buffer.remove(0, at + length);
    return Parse::Frame;
}

QByteArray encodeFrame(int opcode, const QByteArray &payload)
{
    QByteArray out;
    out.append(char(0x80 | opcode));
    const qint64 n = payload.size();
    if (n < 126) {
        out.append(char(n));
    } else if (n < 65536) {
        out.append(char(126));
        out.append(char(n >> 8)).append(char(n & 0xff));
    } else {
        out.append(char(127));
        for (int shift = 56; shift >= 0; shift -= 8)
            out.append(char((n >> shift) & 0xff));
    }
    return out + payload;
}

QByteArray acceptFor(const QByteArray &key)
{
    return QCryptographicHash::hash(key.trimmed() + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11",
                                    QCryptographicHash::Sha1)
        .toBase64();
}

} // namespace ws

WsSession::WsSession(QTcpSocket *socket, QByteArray model, QByteArray target, QByteArray early)
    : QObject(socket), m_socket(socket), m_model(std::move(model)), m_target(std::move(target)),
      m_in(std::move(early))
{
    connect(socket, &QTcpSocket::readyRead, this, &WsSession::onReadyRead);
    send({{"type", "session.created"},
          {"session", QJsonObject{{"model", QString::fromUtf8(m_model)}}},
          {"target", QString::fromUtf8(m_target)}});
    if (!m_in.isEmpty() || socket->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &WsSession::onReadyRead, Qt::QueuedConnection);
}

void WsSession::onReadyRead()
{
    if (!m_socket)
        return;
    m_in += m_socket->readAll();
    for (;;) {
        ws::Frame frame;
        QString error;
        const ws::Parse got = ws::takeFrame(m_in, &frame, &error);
        if (got == ws::Parse::NeedMore)
            return;
        if (got == ws::Parse::Error)
            return fail(error);
        if (frame.opcode == ws::Close) {
            const quint16 code = frame.payload.size() >= 2
                                     ? qFromBigEndian<quint16>(frame.payload.constData())
                                     : 1005;
            if (!m_closeSent)
                sendClose(code == 1005 ? 1000 : code);
            m_socket->disconnectFromHost(); // the server closes the TCP connection first
            return;
        }
        if (frame.opcode == ws::Ping) {
            m_socket->write(ws::encodeFrame(ws::Pong, frame.payload));
            continue;
        }
        if (frame.opcode == ws::Pong)
            continue;
        if (frame.opcode != ws::Continuation)
            m_messageOpcode = frame.opcode;
        m_message += frame.payload;
        if (frame.fin) {
            onMessage(std::exchange(m_messageOpcode, 0), std::exchange(m_message, {}));
            if (!m_socket)
                return;
        }
    }
}

void WsSession::onMessage(int opcode, const QByteArray &payload)
{
    if (opcode != ws::Text)
        return m_socket->write(ws::encodeFrame(opcode, payload)), void(); // binary: echoed
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &perr);
    if (!doc.isObject())
        return send({{"type", "error"}, {"error", QJsonObject{{"message", "not JSON"}}}});
    const QJsonObject event = doc.object();
    if (event.value("type").toString() == QLatin1String("echo"))
        return m_socket->write(ws::encodeFrame(ws::Text, payload)), void(); // byte for byte
    onEvent(event);
}

void WsSession::onEvent(const QJsonObject &event)
{
    const QString type = event.value("type").toString();
    if (type == QLatin1String("session.update")) {
        send({{"type", "session.updated"}, {"session", event.value("session")}});
    } else if (type == QLatin1String("input_audio_buffer.append")) {
        const QByteArray audio = QByteArray::fromBase64(event.value("audio").toString().toLatin1());
        m_audioBytes += audio.size();
        m_audioHash.addData(audio);
        ++m_appends;
    } else if (type == QLatin1String("input_audio_buffer.commit")) {
        send({{"type", "input_audio_buffer.committed"},
              {"bytes", m_audioBytes},
              {"sha256", QString::fromLatin1(m_audioHash.result().toHex())},
              {"appends", m_appends}});
    } else if (type == QLatin1String("response.create")) {
        send({{"type", "response.created"}});
        for (const char *delta : {"Heard ", "you ", "loud and clear."})
            send({{"type", "response.output_text.delta"}, {"delta", delta}});
        send({{"type", "response.done"}});
    } else if (type == QLatin1String("server.close")) {
        sendClose(1000);
    } else {
        send({{"type", "error"}, {"error", QJsonObject{{"message", "unknown event"}}}});
    }
}

void WsSession::send(const QJsonObject &event)
{
    if (m_socket)
        m_socket->write(
            ws::encodeFrame(ws::Text, QJsonDocument(event).toJson(QJsonDocument::Compact)));
}

void WsSession::sendClose(quint16 code)
{
    m_closeSent = true;
    QByteArray payload(2, '\0');
    qToBigEndian<quint16>(code, payload.data());
    m_socket->write(ws::encodeFrame(ws::Close, payload));
}

void WsSession::fail(const QString &why)
{
    qWarning("mock_upstream: WebSocket session: %s", qPrintable(why));
    sendClose(1002);
    m_socket->disconnectFromHost();
}

} // namespace slp::mock
