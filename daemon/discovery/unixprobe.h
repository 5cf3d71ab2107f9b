// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <utility>

class QLocalSocket;

namespace slp {

// One GET /v1/models to a backend on a Unix socket (QNAM in Qt 6.4 cannot reach one): a
// plain HTTP/1.1 request with "Connection: close", the answer read to the close. Bounded as
// the TCP probe is: past the model list limit it stops reading and aborts; the caller's
// timer aborts a silent backend. Emits finished() once, never from inside start().
class UnixProbe : public QObject
{
    Q_OBJECT
public:
    explicit UnixProbe(QObject *parent = nullptr);
    ~UnixProbe() override;

    void start(const QString &path, const QByteArray &userAgent);
    void abort(); // no finished() after this

    // Once finished: the failure ("connection refused", "model list larger than ..."), or
    // empty with the status and the (de-chunked) body.
    QString failure() const { return m_failure; }
    bool overLimit() const { return m_overLimit; }
    int status() const { return m_status; }
    QByteArray takeBody() { return std::exchange(m_body, QByteArray()); }

Q_SIGNALS:
    void finished();

private:
    void onData();
    void onClosed();
    void finish(const QString &failure);
    void stopSocket();
    bool parseAnswer(); // m_raw into m_status and m_body; false (m_failure set) when malformed

    QLocalSocket *m_socket = nullptr; // child
    QByteArray m_raw;                 // the answer as read (head and body)
    QByteArray m_body;
    QString m_failure;
    int m_status = 0;
    bool m_overLimit = false;
    bool m_done = false;      // the result is known
    bool m_cancelled = false; // abort(): nothing more is said
};

} // namespace slp
