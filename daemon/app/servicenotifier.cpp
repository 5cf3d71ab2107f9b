// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/servicenotifier.h"

#include <QByteArray>

#include <systemd/sd-daemon.h>
#include <time.h>

namespace slp {

QString serviceStatusLine(qsizetype routes, qsizetype ambiguous, qsizetype failing,
                          qsizetype stalled, const QString &reloadFailure)
{
    QString line = QStringLiteral("serving %1 route%2; %3 ambiguous; %4 failing; %5 stalled")
                       .arg(routes)
                       .arg(routes == 1 ? "" : "s")
                       .arg(ambiguous)
                       .arg(failing)
                       .arg(stalled);
    if (!reloadFailure.isEmpty())
        line += QStringLiteral("; last reload failed: ") + reloadFailure;
    return line;
}

bool ServiceNotifier::active()
{
    return !qEnvironmentVariableIsEmpty("NOTIFY_SOCKET");
}

std::chrono::microseconds ServiceNotifier::watchdogInterval()
{
    uint64_t usec = 0;
    // Keeps the environment: a reload's child `slp --check` never pings.
    if (sd_watchdog_enabled(0, &usec) <= 0)
        return std::chrono::microseconds(0);
    return std::chrono::microseconds(usec);
}

void ServiceNotifier::send(const QByteArray &message)
{
    if (active())
        sd_notify(0, message.constData()); // a failure to tell systemd is not slp's to handle
}

void ServiceNotifier::ready(const QString &status)
{
    m_status = status;
    send("READY=1\nSTATUS=" + status.toUtf8());
}

void ServiceNotifier::reloading()
{
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const qint64 usec = qint64(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
    send("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + QByteArray::number(usec));
    m_status = QStringLiteral("reloading");
}

void ServiceNotifier::stopping(const QString &status)
{
    m_status = status;
    send("STOPPING=1\nSTATUS=" + status.toUtf8());
}

void ServiceNotifier::setStatus(const QString &status)
{
    if (status == m_status)
        return;
    m_status = status;
    send("STATUS=" + status.toUtf8());
}

void ServiceNotifier::watchdogPing()
{
    send("WATCHDOG=1");
}

} // namespace slp
