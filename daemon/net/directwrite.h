// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "wire/bytechain.h"

class QTcpSocket;

namespace slp {

// Writes `bytes` to a plain TCP socket: straight to the kernel (a chain in one gather call)
// while Qt holds nothing unsent for it, and whatever the kernel does not take (or
// everything, on a TLS socket or with Qt's buffer non-empty) through QTcpSocket::write, piece
// by piece and still shared, so the order is kept and nothing is copied. Returns the bytes
// the kernel took directly (no bytesWritten is emitted for those).
//
// Why: QTcpSocket::write enables the socket's write notifier and the flush that follows
// disables it again, and Qt 6.4's glib event dispatcher unregisters a notifier by a linear
// search over every registered socket: with 1,000 streams open that search was 9.5% of
// slp's CPU (perf), on top of two eventfd wake-ups and an extra poll per relayed SSE event.
qint64 writeDirect(QTcpSocket *socket, const QByteArray &bytes);
qint64 writeDirect(QTcpSocket *socket, const ByteChain &bytes);

} // namespace slp
