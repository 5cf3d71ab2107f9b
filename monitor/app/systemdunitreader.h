// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "systemdunit.h"

#include <QDBusConnection>
#include <QObject>
#include <QVariantMap>

namespace slp::monitor {

// Reads one systemd unit's ActiveState, SubState and StatusText over D-Bus
// (org.freedesktop.systemd1: Manager.GetUnit, then org.freedesktop.DBus.Properties.Get on the
// Unit and Service interfaces). Read-only, and asynchronous throughout so a slow bus never
// blocks the event loop. No bus, no such unit, no answer: unavailable(), and the header
// leaves the unit out.
class SystemdUnitReader : public QObject
{
    Q_OBJECT

public:
    // bus: the system bus in the app; a test passes a bus of its own.
    explicit SystemdUnitReader(const QDBusConnection &bus, const QString &unit = kSlpUnit,
                               QObject *parent = nullptr);

    // A fresh read; one already under way makes this a no-op (its answer is as fresh).
    void refresh();
    bool isReading() const { return m_pending > 0 || m_resolving; }

signals:
    void statusRead(const slp::monitor::UnitStatus &status);
    void unavailable(const QString &why);

private:
    void readProperties(const QString &path);
    void getProperty(const QString &path, const QString &interface, const QString &name);
    void finishRead();

    QDBusConnection m_bus;
    QString m_unit;
    bool m_resolving = false;
    int m_pending = 0;
    QVariantMap m_properties;
    QString m_error;
};

} // namespace slp::monitor
