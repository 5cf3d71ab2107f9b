// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "discovery/modellist.h"

#include <QObject>
#include <QPointer>

class QThread;

namespace slp {

// parseModelList on a thread of its own: a list of 200,000 ids takes 100+ ms to parse, which
// the serving thread must never spend (/healthz, requests). One parse at a time; of a list
// with more than kMaxIdsReported ids, only that many come back (ModelList::count has all).
class ModelListParser : public QObject
{
    Q_OBJECT
public:
    explicit ModelListParser(QObject *parent = nullptr);
    // Waits for a parse still running: bounded, the text is at most kMaxModelListBytes.
    ~ModelListParser() override;

    void parse(QByteArray json);
    bool isBusy() const { return m_thread != nullptr; }

Q_SIGNALS:
    // In this object's thread, once the parse is done.
    void parsed(const slp::ModelList &list);

private:
    QThread *m_thread = nullptr; // owned; deleted once it has finished
};

} // namespace slp
