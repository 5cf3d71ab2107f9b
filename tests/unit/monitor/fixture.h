// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The daemon text recorded for the monitor's unit tests (data/; its README says how).
#include "status.h"

#include <QByteArray>
#include <QDateTime>
#include <QFile>
#include <QString>
#include <QTest>
#include <QUrl>

namespace slp::monitor::test {

// The bytes of data/NAME; a missing fixture ends the test run at once.
inline QByteArray fixture(const QString &name)
{
    QFile f(QFINDTESTDATA(QStringLiteral("data/") + name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll();
}

// One poll of an SLP at 127.0.0.1:8080 as recorded at `moment` (data/catalog-MOMENT.json and
// data/metrics-MOMENT.txt).
inline PollResult recordedPoll(const QString &moment)
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.finishedAt = QDateTime::currentDateTimeUtc();
    p.catalogBody = fixture(QStringLiteral("catalog-%1.json").arg(moment));
    p.metricsBody = fixture(QStringLiteral("metrics-%1.txt").arg(moment));
    return p;
}

// One poll of an SLP that is not there.
inline PollResult refusedPoll()
{
    PollResult p;
    p.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:8080"));
    p.catalogError = QStringLiteral("Connection refused");
    p.metricsError = QStringLiteral("Connection refused");
    return p;
}

} // namespace slp::monitor::test
