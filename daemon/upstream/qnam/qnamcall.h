// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "upstream/upstreamtransport.h"

#include <QPointer>
#include <QString>

class QNetworkAccessManager;
class QNetworkReply;

namespace slp {

class OneShotBody;
class QnamTransport;

// One request through one of the transport's QNAMs (`upstream_transport: qnam`): the reply's
// head checked against what QNAM 6.4 gets wrong (a fenced head is a 502, never relayed), its
// body handed on with backpressure, and its end classified. A request QNAM failed without
// ever sending it goes out again, a bounded number of times.
class QnamCall : public UpstreamCall
{
public:
    // Sends at once; `transport` lends it one of `origin`'s QNAMs.
    QnamCall(QnamTransport *transport, QString origin, UpstreamRequest request, Observer &observer);
    ~QnamCall() override;

    qint64 bytesAvailable() const override;
    bool isRunning() const override;
    QByteArray read(qint64 maxBytes) override;
    void abort() override;

private:
    void send();
    void dropReply();
    void retireManager();
    void onMetaData();
    // Refuses the response: aborts the reply and retires its QNAM, so the connection closes.
    void fence(const QString &why);
    void onFinished();
    // onFinished()'s four jobs, in order; each true when it ended (or re-sent) the call.
    bool reportFence();
    bool takeLateHead(); // a tiny answer's head comes with finished() alone
    bool resendUnsent();
    void classifyEnd();
    // The exchange is over: its connection can serve another request.
    void releaseSlot();
    // The reply is gone too: the manager may go once no call holds it.
    void detachManager();

    QPointer<QnamTransport> m_transport;
    QString m_origin;
    UpstreamRequest m_request; // kept for a re-send of a request that never left
    QNetworkAccessManager *m_manager = nullptr;
    bool m_counted = false; // in the manager's active count
    QPointer<QNetworkReply> m_reply;
    QPointer<OneShotBody> m_body;
    int m_redials = 0;
    bool m_aborted = false;
    bool m_closeDelimited = false;
    QString m_fenced; // why the response was refused (a 502), or empty
    bool m_fenceReported = false;
};

} // namespace slp
