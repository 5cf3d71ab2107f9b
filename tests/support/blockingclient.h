// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

namespace slp::test {

// A plain blocking client on its own socket, for tests that need what Qt's clients do not
// do: write a whole request before reading (as most client libraries do), run on threads of
// their own, or see the kernel's errors (ECONNRESET, EPIPE) as they are. Every call is
// bounded by a 10 s (or `timeoutS`) socket timeout.
struct BlockingAnswer
{
    QByteArray statusLine; // empty when no answer arrived
    QByteArray raw;        // everything read (until the close, or the bound)
    int error = 0;         // errno of the call that failed, 0 for none
    QString describe() const;
};

// A connected socket, or -1 with errno set.
int blockingConnect(const QString &host, quint16 port, int timeoutS = 10);
// False (and `*error` set) when a send failed.
bool blockingSendAll(int fd, const QByteArray &bytes, int *error);
// Sends `request` whole, then reads the answer until the server closes (send
// `Connection: close`) or `timeoutS` passes. A send that fails ends the try without a read,
// as client libraries do.
BlockingAnswer sendThenRead(const QString &host, quint16 port, const QByteArray &request,
                            int timeoutS = 10);

} // namespace slp::test
