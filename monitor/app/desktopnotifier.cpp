// SPDX-License-Identifier: GPL-3.0-or-later
#include "desktopnotifier.h"

#include "plaintext.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QLoggingCategory>
#include <QSystemTrayIcon>
#include <QVariantMap>

Q_LOGGING_CATEGORY(lcNotify, "slp.monitor.notify")

namespace slp::monitor {

namespace {

const QString kService = QStringLiteral("org.freedesktop.Notifications");
const QString kPath = QStringLiteral("/org/freedesktop/Notifications");

} // namespace

DesktopNotifier::DesktopNotifier(QObject *parent) : QObject(parent)
{}

void DesktopNotifier::show(const Notice &notice)
{
    qCInfo(lcNotify).noquote() << "notification:" << notice.title;
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (!bus.isConnected()) {
        showFallback(notice, QStringLiteral("no D-Bus session bus"));
        return;
    }
    // Built by hand rather than through QDBusInterface, whose constructor introspects the
    // service synchronously and would block the event loop on a slow bus.
    QDBusMessage call =
        QDBusMessage::createMethodCall(kService, kPath, kService, QStringLiteral("Notify"));
    const uchar urgency = notice.urgency == Notice::Urgency::Critical ? 2 : 1;
    QVariantMap hints;
    hints.insert(QStringLiteral("urgency"), QVariant::fromValue(urgency));
    hints.insert(QStringLiteral("desktop-entry"), QStringLiteral("slp-monitor"));
    call << QStringLiteral("slp-monitor") // app_name
         << uint(0)                       // replaces_id: every transition is its own event
         << QString()                     // app_icon
         // The body is markup to most servers (body-markup); the summary is plain text.
         << notice.title << markupEscaped(notice.body) << QStringList() // actions
         << hints << int(-1); // the daemon's default expiry
    const QDBusPendingCall pending = bus.asyncCall(call, 5000);
    auto *watcher = new QDBusPendingCallWatcher(pending, this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this, watcher, notice] {
        watcher->deleteLater();
        const QDBusPendingReply<uint> reply = *watcher;
        if (reply.isError())
            showFallback(notice, reply.error().message());
    });
}

void DesktopNotifier::showFallback(const Notice &notice, const QString &why)
{
    if (m_tray && m_tray->isVisible()) {
        qCInfo(lcNotify).noquote()
            << "no notification service (" << why << "); using the tray balloon";
        m_tray->showMessage(autoTextLiteral(notice.title), autoTextLiteral(notice.body),
                            notice.urgency == Notice::Urgency::Critical
                                ? QSystemTrayIcon::Critical
                                : QSystemTrayIcon::Information);
        return;
    }
    qCWarning(lcNotify).noquote() << "cannot notify (" << why << "):" << notice.title << "--"
                                  << notice.body;
}

} // namespace slp::monitor
