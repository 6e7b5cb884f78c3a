#include "gui/newconnectiondialog.h"

#include "core/config/profilestore.h"
#include "core/config/settingsschema.h"
#include "core/config/validation.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Config::SettingsSchema;

NewConnectionDialog::NewConnectionDialog(const Config::ProfileStore &store, QWidget *parent)
    : QDialog(parent)
    , m_store(store)
    , m_name(new QLineEdit(this))
    , m_server(new QLineEdit(this))
    , m_token(new QLineEdit(this))
    , m_namespace(new QLineEdit(this))
    , m_caFile(new QLineEdit(this))
    , m_problems(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("newConnectionDialog"));
    setWindowTitle(tr("Connect to a Cluster"));
    auto *intro = new QLabel(tr("The API server and a token are enough to start. Everything else has a default you can change "
                                "later under Connection Profiles."),
                             this);
    intro->setWordWrap(true);

    m_name->setObjectName(QStringLiteral("nameEdit"));
    m_name->setText(store.contains(QStringLiteral("my-cluster")) ? QString() : QStringLiteral("my-cluster"));
    m_server->setObjectName(QStringLiteral("serverEdit"));
    m_server->setPlaceholderText(QStringLiteral("https://api.example.com:6443"));
    m_token->setObjectName(QStringLiteral("tokenEdit"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("kept in the OS keychain only"));
    m_namespace->setObjectName(QStringLiteral("namespaceEdit"));
    m_namespace->setText(SettingsSchema::defaultValue(QStringLiteral("FORGE_K8S_NAMESPACE")));
    m_caFile->setObjectName(QStringLiteral("caFileEdit"));
    m_caFile->setPlaceholderText(tr("optional: for a private certificate authority"));
    auto *browse = new QToolButton(this);
    browse->setObjectName(QStringLiteral("browseCaButton"));
    browse->setText(tr("…"));
    browse->setToolTip(tr("Choose the CA file"));
    browse->setAccessibleName(tr("Choose the CA file"));
    auto *caRow = new QHBoxLayout;
    caRow->addWidget(m_caFile, 1);
    caRow->addWidget(browse);

    auto *form = new QFormLayout;
    // The labels are the fields' buddies: Alt+letter reaches each, and AT-SPI reads the label.
    form->addRow(tr("Profile &name:"), m_name);
    form->addRow(tr("&API server:"), m_server);
    form->addRow(tr("&Token:"), m_token);
    form->addRow(tr("Names&pace:"), m_namespace);
    form->addRow(tr("&CA file:"), caRow);
    for (QLineEdit *edit : {m_name, m_server, m_token, m_namespace}) {
        if (auto *label = qobject_cast<QLabel *>(form->labelForField(edit))) edit->setAccessibleName(label->text().remove(u'&').remove(u':'));
    }
    // The CA row is a layout (field and browse button): its label names the field by hand.
    if (auto *label = qobject_cast<QLabel *>(form->labelForField(caRow))) label->setBuddy(m_caFile);
    m_caFile->setAccessibleName(tr("CA file"));
    for (QLineEdit *edit : {m_name, m_server, m_token, m_namespace, m_caFile}) {
        connect(edit, &QLineEdit::textChanged, this, &NewConnectionDialog::check);
    }
    for (QLineEdit *edit : {m_server, m_token, m_namespace, m_caFile}) {
        const QString key = edit == m_server ? QStringLiteral("FORGE_K8S_API_SERVER") : edit == m_token ? QStringLiteral("FORGE_K8S_TOKEN")
                          : edit == m_namespace ? QStringLiteral("FORGE_K8S_NAMESPACE") : QStringLiteral("FORGE_K8S_CA_FILE");
        edit->setToolTip(QStringLiteral("%1 — %2").arg(key, SettingsSchema::find(key)->translatedHelp()));
    }

    m_problems->setObjectName(QStringLiteral("problemsLabel"));
    m_problems->setWordWrap(true);
    m_problems->setTextFormat(Qt::PlainText);
    auto *create = m_buttons->addButton(tr("C&reate and Connect"), QDialogButtonBox::AcceptRole);
    create->setObjectName(QStringLiteral("createButton"));
    create->setDefault(true);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_problems);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("CA certificates (PEM)"), QString(), tr("PEM files (*.pem *.crt);;All files (*)"));
        if (!file.isEmpty()) m_caFile->setText(file);
    });
    resize(560, sizeHint().height());
    check();
}

QString NewConnectionDialog::profileName() const
{
    return m_name->text().trimmed();
}

QMap<QString, QString> NewConnectionDialog::values() const
{
    QMap<QString, QString> values{{QStringLiteral("FORGE_K8S_API_SERVER"), m_server->text().trimmed()},
                                  {QStringLiteral("FORGE_K8S_TOKEN"), m_token->text().trimmed()},
                                  {QStringLiteral("FORGE_K8S_NAMESPACE"), m_namespace->text().trimmed()}};
    if (!m_caFile->text().trimmed().isEmpty()) values.insert(QStringLiteral("FORGE_K8S_CA_FILE"), m_caFile->text().trimmed());
    return values;
}

QStringList NewConnectionDialog::problems() const
{
    QStringList problems;
    if (const auto name = Validation::profileName(profileName()); !name) {
        problems << tr("Profile name: %1").arg(name.error().message);
    } else if (m_store.contains(*name)) {
        problems << tr("Profile name: a profile named %1 already exists.").arg(*name);
    }
    if (m_server->text().trimmed().isEmpty()) problems << tr("API server: enter its URL, e.g. https://api.example.com:6443.");
    if (m_token->text().trimmed().isEmpty()) problems << tr("Token: paste a bearer token (kubectl create token NAME makes one).");
    const QMap<QString, QString> entered = values();
    for (auto it = entered.cbegin(); it != entered.cend(); ++it) {
        if (it.value().isEmpty()) continue;
        if (const auto checked = SettingsSchema::validate(it.key(), it.value()); !checked) problems << checked.error().message;
    }
    return problems;
}

void NewConnectionDialog::check()
{
    const QStringList problems = this->problems();
    // Every problem at once, each starting with its field, so the person sees what is left.
    m_problems->setText(problems.join(u'\n'));
    for (QAbstractButton *button : m_buttons->buttons()) {
        if (m_buttons->buttonRole(button) == QDialogButtonBox::AcceptRole) button->setEnabled(problems.isEmpty());
    }
}

} // namespace Starforge::Gui
