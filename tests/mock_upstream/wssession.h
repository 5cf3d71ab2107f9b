// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QCryptographicHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>

namespace slp::mock {

// RFC 6455, the little the mock needs: pure, so the tests' WebSocket backend is plain code.
namespace ws {
enum Opcode
{
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
};
struct Frame
{
    bool fin = true;
    int opcode = Text;
    QByteArray payload; // unmasked
};
enum class Parse
{
    NeedMore,
    Frame,
    Error,
};
// Takes one frame off the front of `buffer`. Client frames must be masked (RFC 6455 5.1).
Parse takeFrame(QByteArray &buffer, Frame *frame, QString *error, qint64 maxPayload = 16 << 20);
// A server frame (unmasked).
QByteArray encodeFrame(int opcode, const QByteArray &payload);
// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key.
QByteArray acceptFor(const QByteArray &key);
} // namespace ws

// One upgraded connection speaking a Realtime-like echo protocol over JSON text messages:
// session.created on open; session.update -> session.updated; input_audio_buffer.append
// counts and hashes the decoded audio; input_audio_buffer.commit reports bytes, sha256 and
// appends; response.create -> response.created, three output_text deltas, response.done;
// echo -> the same message back; server.close -> a close frame from the server first.
class WsSession : public QObject
{
    Q_OBJECT
public:
    // `model` and `target`: what session.created reports; `early`: bytes already read past the
    // upgrade request.
    WsSession(QTcpSocket *socket, QByteArray model, QByteArray target, QByteArray early);

private:
    void onReadyRead();
    void onMessage(int opcode, const QByteArray &payload);
    void onEvent(const QJsonObject &event);
    void send(const QJsonObject &event);
    void sendClose(quint16 code);
    void fail(const QString &why);

    QPointer<QTcpSocket> m_socket;
    QByteArray m_model;
    QByteArray m_target;
    QByteArray m_in;
    int m_messageOpcode = 0; // the fragmented message being assembled (0: none)
    QByteArray m_message;
    qint64 m_audioBytes = 0;
    int m_appends = 0;
    QCryptographicHash m_audioHash{QCryptographicHash::Sha256};
    bool m_closeSent = false;
};

} // namespace slp::mock
