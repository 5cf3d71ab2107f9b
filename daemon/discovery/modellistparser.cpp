// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/modellistparser.h"

#include <QThread>

#include <memory>

namespace slp {

ModelListParser::ModelListParser(QObject *parent) : QObject(parent)
{}

ModelListParser::~ModelListParser()
{
    if (m_thread) {
        m_thread->disconnect(this);
        m_thread->wait();
        delete m_thread;
    }
}

void ModelListParser::parse(QByteArray json)
{
    auto result = std::make_shared<ModelList>();
    QThread *thread = QThread::create([json = std::move(json), result]() mutable {
        *result = parseModelList(json);
        // The text and the ids no one reads are freed here too, not on the serving thread.
        json = QByteArray();
        if (result->ids.size() > kMaxIdsReported)
            result->ids = result->ids.first(kMaxIdsReported);
    });
    m_thread = thread;
    connect(thread, &QThread::finished, this, [this, thread, result] {
        if (m_thread == thread)
            m_thread = nullptr;
        thread->deleteLater();
        Q_EMIT parsed(*result);
    });
    thread->start();
}

} // namespace slp
