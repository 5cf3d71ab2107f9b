// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

#include <chrono>

namespace slp {

// The one-line summary systemd shows (`systemctl status slp`): "serving 6 routes; 1 ambiguous;
// 0 failing; 0 stalled", with "; last reload failed: ..." after a reload that was refused.
QString serviceStatusLine(qsizetype routes, qsizetype ambiguous, qsizetype failing,
                          qsizetype stalled = 0, const QString &reloadFailure = {});

// Tells the service manager what the daemon is doing (`Type=notify`), through libsystemd's
// sd_notify: READY=1 once serving, STATUS=, RELOADING=1 and READY=1 around a reload,
// STOPPING=1 at drain, WATCHDOG=1. Without $NOTIFY_SOCKET (not run by systemd) every call is
// a no-op, so slp runs unchanged outside systemd.
class ServiceNotifier
{
public:
    static bool active(); // $NOTIFY_SOCKET is set
    // The interval systemd expects WATCHDOG=1 within ($WATCHDOG_USEC); zero when it is off.
    static std::chrono::microseconds watchdogInterval();

    void ready(const QString &status);
    // RELOADING=1 with MONOTONIC_USEC (systemd 253's Type=notify-reload asks for it; 252's
    // Type=notify takes RELOADING=1 and ignores it); READY=1 ends the reload either way.
    void reloading();
    void stopping(const QString &status);
    void setStatus(const QString &status); // sent only when it changed
    void watchdogPing();

private:
    void send(const QByteArray &message);
    QString m_status;
};

} // namespace slp
