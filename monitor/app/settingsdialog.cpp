// SPDX-License-Identifier: GPL-3.0-or-later
#include "settingsdialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace slp::monitor {

SettingsDialog::SettingsDialog(const MonitorSettings &settings, QWidget *parent)
    : QDialog(parent), m_settings(settings), m_url(new QLineEdit(settings.url.toString(), this)),
      m_interval(new QLineEdit(formatInterval(settings.interval), this)),
      m_caFile(new QLineEdit(settings.caFile, this)),
      m_notifications(new QCheckBox(QStringLiteral("Desktop notifications"), this)),
      m_error(new QLabel(this))
{
    setWindowTitle(QStringLiteral("slp-monitor settings"));
    m_url->setPlaceholderText(QStringLiteral("http://127.0.0.1:8080"));
    m_interval->setPlaceholderText(QStringLiteral("10s"));
    m_interval->setToolTip(QStringLiteral("Go duration syntax: 500ms, 10s, 1m"));
    m_caFile->setPlaceholderText(QStringLiteral("system CAs only"));
    m_caFile->setToolTip(QStringLiteral("A PEM file of extra CA certificates for an https:// "
                                        "URL, e.g. Caddy's tls internal root.crt"));
    m_notifications->setChecked(settings.notifications);
    m_error->setStyleSheet(QStringLiteral("color: #c62828"));
    m_error->setWordWrap(true);
    m_error->hide();

    auto *form = new QFormLayout; // owned by the layout below
    form->addRow(QStringLiteral("SLP URL"), m_url);
    form->addRow(QStringLiteral("Poll interval"), m_interval);
    form->addRow(QStringLiteral("CA file"), m_caFile);
    form->addRow(QString(), m_notifications);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &SettingsDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    setMinimumWidth(380);
}

void SettingsDialog::accept()
{
    QString why;
    const auto url = parseBaseUrl(m_url->text(), &why);
    const auto interval = url ? parseInterval(m_interval->text(), &why) : std::nullopt;
    const QString caFile = m_caFile->text().trimmed();
    const bool caOk = !url || !interval || caFile.isEmpty() || loadCaFile(caFile, &why);
    if (!url || !interval || !caOk) {
        m_error->setText(why);
        m_error->show();
        return;
    }
    m_settings.caFile = caFile;
    m_settings.url = *url;
    m_settings.interval = *interval;
    m_settings.notifications = m_notifications->isChecked();
    QDialog::accept();
}

} // namespace slp::monitor
