// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The daemon text recorded for the monitor's unit tests (data/; its README says how).
#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>

namespace slp::monitor::test {

// The bytes of data/NAME; a missing fixture ends the test run at once.
inline QByteArray fixture(const QString &name)
{
    QFile f(QFINDTESTDATA(QStringLiteral("data/") + name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll();
}

} // namespace slp::monitor::test
