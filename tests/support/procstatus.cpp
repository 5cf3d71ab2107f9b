// SPDX-License-Identifier: GPL-3.0-or-later
#include "procstatus.h"

#include <QFile>
#include <QList>

namespace slp::test {

qint64 residentKb(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).simplified().split(' ').value(0).toLongLong();
    return -1;
}

} // namespace slp::test
