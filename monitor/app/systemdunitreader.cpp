// SPDX-License-Identifier: GPL-3.0-or-later
#include "systemdunitreader.h"

#include <QDBusMessage>
#include <QDBusObjectPath>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusVariant>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcSystemd, "slp.monitor.systemd")

namespace slp::monitor {

namespace {

const QString kService = QStringLiteral("org.freedesktop.systemd1");
const QString kManagerPath = QStringLiteral("/org/freedesktop/systemd1");
const QString kManager = QStringLiteral("org.freedesktop.systemd1.Manager");
const QString kUnit = QStringLiteral("org.freedesktop.systemd1.Unit");
const QString kServiceInterface = QStringLiteral("org.freedesktop.systemd1.Service");
const QString kProperties = QStringLiteral("org.freedesktop.DBus.Properties");
constexpr int kTimeoutMs = 3000;

} // namespace

SystemdUnitReader::SystemdUnitReader(const QDBusConnection &bus, const QString &unit,
                                     QObject *parent)
    : QObject(parent), m_bus(bus), m_unit(unit)
{}

void SystemdUnitReader::refresh()
{
    if (isReading())
        return;
    if (!m_bus.isConnected()) {
        emit unavailable(QStringLiteral("no D-Bus system bus"));
        return;
    }
    // GetUnit, not LoadUnit: only a unit systemd has loaded is read, nothing is loaded.
    QDBusMessage call =
        QDBusMessage::createMethodCall(kService, kManagerPath, kManager, QStringLiteral("GetUnit"));
    call << m_unit;
    m_resolving = true;
    auto *watcher = new QDBusPendingCallWatcher(m_bus.asyncCall(call, kTimeoutMs), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_resolving = false;
        const QDBusPendingReply<QDBusObjectPath> reply = *watcher;
        if (reply.isError()) {
            qCDebug(lcSystemd).noquote() << m_unit << "not read:" << reply.error().message();
            emit unavailable(reply.error().message());
            return;
        }
        readProperties(reply.value().path());
    });
}

void SystemdUnitReader::readProperties(const QString &path)
{
    m_properties.clear();
    m_error.clear();
    getProperty(path, kUnit, QStringLiteral("ActiveState"));
    getProperty(path, kUnit, QStringLiteral("SubState"));
    getProperty(path, kServiceInterface, QStringLiteral("StatusText"));
}

void SystemdUnitReader::getProperty(const QString &path, const QString &interface,
                                    const QString &name)
{
    QDBusMessage call =
        QDBusMessage::createMethodCall(kService, path, kProperties, QStringLiteral("Get"));
    call << interface << name;
    ++m_pending;
    auto *watcher = new QDBusPendingCallWatcher(m_bus.asyncCall(call, kTimeoutMs), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this, watcher, name] {
        watcher->deleteLater();
        const QDBusPendingReply<QDBusVariant> reply = *watcher;
        if (reply.isError())
            m_error = reply.error().message();
        else
            m_properties.insert(name, reply.value().variant());
        if (--m_pending == 0)
            finishRead();
    });
}

void SystemdUnitReader::finishRead()
{
    // A missing StatusText (not a service, an older systemd) costs only the text.
    if (const std::optional<UnitStatus> status = unitStatusFrom(m_unit, m_properties)) {
        emit statusRead(*status);
        return;
    }
    emit unavailable(m_error.isEmpty() ? QStringLiteral("no ActiveState") : m_error);
}

} // namespace slp::monitor
