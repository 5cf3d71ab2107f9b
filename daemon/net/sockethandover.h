// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

class QTcpSocket;

namespace slp {

// Takes a connected socket's connection out of Qt, for code that reads and writes the
// descriptor itself (a WebSocket tunnel's SocketRelay): returns a duplicate of its descriptor (the
// caller's; -1 when there is none), after which nothing Qt or SLP connected to the socket
// hears from it (every signal but `destroyed` is disconnected) and the QTcpSocket is aborted.
// Aborting closes only Qt's descriptor: the duplicate keeps the connection open, and no FIN
// is sent. Bytes Qt had already read are the caller's to take first (readAll()).
int takeDescriptor(QTcpSocket *socket);

} // namespace slp
