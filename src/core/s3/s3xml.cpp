#include "core/s3/s3xml.h"

#include <QCoreApplication>
#include <QXmlStreamReader>
#include <QXmlStreamWriter>

#include <vector>

namespace Starforge::S3::Xml {

namespace {

// Bounds for hostile input: S3 documents are at most a few levels deep, and a ListObjectsV2 page
// holds at most 1000 entries of a handful of elements each.
constexpr int MaxDepth = 16;
constexpr int MaxNodes = 200000;

// The document as a small element tree (local names, namespaces ignored: S3 puts everything in
// its 2006-03-01 namespace, some servers omit it). Text is the concatenated character data.
struct Tree
{
    struct Node
    {
        QString name;
        QString text;
        std::vector<int> children;
    };
    std::vector<Node> nodes; // nodes[0] is the root element

    int child(int node, QLatin1String name) const
    {
        for (int c : nodes[static_cast<size_t>(node)].children) {
            if (nodes[static_cast<size_t>(c)].name == name) {
                return c;
            }
        }
        return -1;
    }
    QList<int> children(int node, QLatin1String name) const
    {
        QList<int> out;
        for (int c : nodes[static_cast<size_t>(node)].children) {
            if (nodes[static_cast<size_t>(c)].name == name) {
                out.append(c);
            }
        }
        return out;
    }
    QString text(int node, QLatin1String name) const
    {
        const int c = child(node, name);
        return c < 0 ? QString() : nodes[static_cast<size_t>(c)].text;
    }
    const QString &rootName() const { return nodes.front().name; }
};

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(S3)
};

Error unreadable(QLatin1String what, const QString &why)
{
    return Error::unavailable(Text::tr("The S3 server sent a %1 answer that cannot be read (%2). Check that the endpoint is "
                                 "an S3 API address.").arg(what, why));
}

Result<Tree> parseTree(const QByteArray &xml, QLatin1String what)
{
    QXmlStreamReader reader(xml);
    Tree tree;
    std::vector<int> stack;
    while (!reader.atEnd()) {
        const QXmlStreamReader::TokenType token = reader.readNext();
        if (token == QXmlStreamReader::StartElement) {
            if (stack.size() >= MaxDepth || tree.nodes.size() >= MaxNodes) {
                return unreadable(what, Text::tr("nested or repeated too deeply"));
            }
            if (stack.empty() && !tree.nodes.empty()) {
                return unreadable(what, Text::tr("more than one root element"));
            }
            const int index = static_cast<int>(tree.nodes.size());
            tree.nodes.push_back({reader.name().toString(), {}, {}});
            if (!stack.empty()) {
                tree.nodes[static_cast<size_t>(stack.back())].children.push_back(index);
            }
            stack.push_back(index);
        } else if (token == QXmlStreamReader::EndElement) {
            if (!stack.empty()) {
                stack.pop_back();
            }
        } else if (token == QXmlStreamReader::Characters && !stack.empty()) {
            tree.nodes[static_cast<size_t>(stack.back())].text += reader.text();
        } else if (token == QXmlStreamReader::DTD) {
            // Entity declarations are how "billion laughs" documents grow; S3 never sends a DTD.
            return unreadable(what, Text::tr("a DTD is not allowed"));
        }
    }
    if (reader.hasError()) {
        return unreadable(what, Text::tr("%1 at line %2").arg(reader.errorString()).arg(reader.lineNumber()));
    }
    if (tree.nodes.empty()) {
        return unreadable(what, Text::tr("no XML element"));
    }
    return tree;
}

Result<void> expectRoot(const Tree &tree, QLatin1String root, QLatin1String what)
{
    if (tree.rootName() != root) {
        return unreadable(what, Text::tr("<%1> instead of <%2>").arg(tree.rootName(), root));
    }
    return {};
}

std::optional<qint64> toSize(const QString &text)
{
    bool ok = false;
    const qint64 value = text.trimmed().toLongLong(&ok);
    if (!ok || value < 0) {
        return std::nullopt;
    }
    return value;
}

bool isTrue(const QString &text)
{
    return text.trimmed() == QLatin1String("true");
}

QDateTime toTime(const QString &text)
{
    return QDateTime::fromString(text.trimmed(), Qt::ISODateWithMs);
}

ErrorDocument errorFrom(const Tree &tree, int node)
{
    ErrorDocument doc;
    doc.code = tree.text(node, QLatin1String("Code")).trimmed();
    doc.message = tree.text(node, QLatin1String("Message"));
    doc.resource = tree.text(node, QLatin1String("Resource"));
    doc.requestId = tree.text(node, QLatin1String("RequestId"));
    doc.bucketName = tree.text(node, QLatin1String("BucketName"));
    doc.key = tree.text(node, QLatin1String("Key"));
    return doc;
}

} // namespace

std::optional<ErrorDocument> parseError(const QByteArray &xml)
{
    const auto tree = parseTree(xml, QLatin1String("error"));
    if (!tree || tree->rootName() != QLatin1String("Error")) {
        return std::nullopt;
    }
    ErrorDocument doc = errorFrom(*tree, 0);
    if (doc.code.isEmpty()) {
        return std::nullopt;
    }
    return doc;
}

Result<ListObjectsPage> parseListObjectsV2(const QByteArray &xml)
{
    const QLatin1String what("ListObjectsV2");
    const auto parsed = parseTree(xml, what);
    if (!parsed) {
        return parsed.error();
    }
    const Tree &tree = *parsed;
    if (auto root = expectRoot(tree, QLatin1String("ListBucketResult"), what); !root) {
        return root.error();
    }
    ListObjectsPage page;
    for (int c : tree.children(0, QLatin1String("Contents"))) {
        ObjectInfo object;
        object.key = tree.text(c, QLatin1String("Key"));
        if (object.key.isEmpty()) {
            return unreadable(what, Text::tr("an entry without a key"));
        }
        const auto size = toSize(tree.text(c, QLatin1String("Size")));
        if (!size) {
            return unreadable(what, Text::tr("the size of %1 is not a number").arg(object.key));
        }
        object.size = *size;
        object.etag = tree.text(c, QLatin1String("ETag")).toUtf8();
        object.lastModified = toTime(tree.text(c, QLatin1String("LastModified")));
        page.objects.append(object);
    }
    for (int c : tree.children(0, QLatin1String("CommonPrefixes"))) {
        page.commonPrefixes.append(tree.text(c, QLatin1String("Prefix")));
    }
    page.truncated = isTrue(tree.text(0, QLatin1String("IsTruncated")));
    page.nextContinuationToken = tree.text(0, QLatin1String("NextContinuationToken"));
    if (page.truncated && page.nextContinuationToken.isEmpty()) {
        // Following the listing without a token would return the first page forever.
        return unreadable(what, Text::tr("a truncated page without NextContinuationToken"));
    }
    page.keyCount = static_cast<int>(toSize(tree.text(0, QLatin1String("KeyCount"))).value_or(page.objects.size()));
    return page;
}

Result<ListPartsPage> parseListParts(const QByteArray &xml)
{
    const QLatin1String what("ListParts");
    const auto parsed = parseTree(xml, what);
    if (!parsed) {
        return parsed.error();
    }
    const Tree &tree = *parsed;
    if (auto root = expectRoot(tree, QLatin1String("ListPartsResult"), what); !root) {
        return root.error();
    }
    ListPartsPage page;
    page.uploadId = tree.text(0, QLatin1String("UploadId"));
    for (int c : tree.children(0, QLatin1String("Part"))) {
        PartInfo part;
        const auto number = toSize(tree.text(c, QLatin1String("PartNumber")));
        const auto size = toSize(tree.text(c, QLatin1String("Size")));
        if (!number || *number < 1 || *number > 10000 || !size) {
            return unreadable(what, Text::tr("a part without a valid number or size"));
        }
        part.partNumber = static_cast<int>(*number);
        part.size = *size;
        part.etag = tree.text(c, QLatin1String("ETag")).toUtf8();
        page.parts.append(part);
    }
    page.truncated = isTrue(tree.text(0, QLatin1String("IsTruncated")));
    const auto marker = toSize(tree.text(0, QLatin1String("NextPartNumberMarker")));
    page.nextPartNumberMarker = marker && *marker <= 10000 ? static_cast<int>(*marker) : 0;
    if (page.truncated && page.nextPartNumberMarker <= 0) {
        return unreadable(what, Text::tr("a truncated page without NextPartNumberMarker"));
    }
    return page;
}

Result<ListUploadsPage> parseListMultipartUploads(const QByteArray &xml)
{
    const QLatin1String what("ListMultipartUploads");
    const auto parsed = parseTree(xml, what);
    if (!parsed) {
        return parsed.error();
    }
    const Tree &tree = *parsed;
    if (auto root = expectRoot(tree, QLatin1String("ListMultipartUploadsResult"), what); !root) {
        return root.error();
    }
    ListUploadsPage page;
    for (int c : tree.children(0, QLatin1String("Upload"))) {
        UploadInfo upload;
        upload.key = tree.text(c, QLatin1String("Key"));
        upload.uploadId = tree.text(c, QLatin1String("UploadId"));
        upload.initiated = toTime(tree.text(c, QLatin1String("Initiated")));
        if (upload.uploadId.isEmpty()) {
            return unreadable(what, Text::tr("an upload without an UploadId"));
        }
        page.uploads.append(upload);
    }
    page.truncated = isTrue(tree.text(0, QLatin1String("IsTruncated")));
    page.nextKeyMarker = tree.text(0, QLatin1String("NextKeyMarker"));
    page.nextUploadIdMarker = tree.text(0, QLatin1String("NextUploadIdMarker"));
    if (page.truncated && page.nextKeyMarker.isEmpty()) {
        return unreadable(what, Text::tr("a truncated page without NextKeyMarker"));
    }
    return page;
}

Result<QString> parseInitiateMultipartUpload(const QByteArray &xml)
{
    const QLatin1String what("CreateMultipartUpload");
    const auto parsed = parseTree(xml, what);
    if (!parsed) {
        return parsed.error();
    }
    if (auto root = expectRoot(*parsed, QLatin1String("InitiateMultipartUploadResult"), what); !root) {
        return root.error();
    }
    const QString id = parsed->text(0, QLatin1String("UploadId")).trimmed();
    if (id.isEmpty()) {
        return unreadable(what, Text::tr("no UploadId"));
    }
    return id;
}

Result<CompleteResult> parseCompleteMultipartUpload(const QByteArray &xml)
{
    const QLatin1String what("CompleteMultipartUpload");
    const auto parsed = parseTree(xml, what);
    if (!parsed) {
        return parsed.error();
    }
    const Tree &tree = *parsed;
    CompleteResult result;
    if (tree.rootName() == QLatin1String("Error")) {
        result.error = errorFrom(tree, 0);
        if (result.error->code.isEmpty()) {
            return unreadable(what, Text::tr("an error without a code"));
        }
        return result;
    }
    if (auto root = expectRoot(tree, QLatin1String("CompleteMultipartUploadResult"), what); !root) {
        return root.error();
    }
    result.location = tree.text(0, QLatin1String("Location"));
    result.etag = tree.text(0, QLatin1String("ETag")).trimmed().toUtf8();
    return result;
}

QByteArray completeMultipartUploadBody(const QList<PartInfo> &parts)
{
    QByteArray body;
    QXmlStreamWriter writer(&body);
    writer.writeStartDocument();
    writer.writeStartElement(QStringLiteral("CompleteMultipartUpload"));
    writer.writeDefaultNamespace(QStringLiteral("http://s3.amazonaws.com/doc/2006-03-01/"));
    for (const PartInfo &part : parts) {
        writer.writeStartElement(QStringLiteral("Part"));
        writer.writeTextElement(QStringLiteral("PartNumber"), QString::number(part.partNumber));
        writer.writeTextElement(QStringLiteral("ETag"), QString::fromLatin1(part.etag));
        writer.writeEndElement();
    }
    writer.writeEndElement();
    writer.writeEndDocument();
    return body;
}

} // namespace Starforge::S3::Xml
