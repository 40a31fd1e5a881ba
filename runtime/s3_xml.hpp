// The XML of S3's answers as the copilot reads it (runtime/object_store.cpp): a ListObjectsV2
// page, the UploadId of CreateMultipartUpload, and the Code and Message of an error. Not an XML
// parser: S3's answers are flat enough that the first <Tag>...</Tag> is the field, as every
// S3-compatible store (MinIO, s3rver, Ceph RGW) writes them. Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::runtime::s3_xml {

// XML's five predefined entities (&amp; &lt; &gt; &quot; &apos;) decoded; anything else as it is.
std::string unescape(std::string_view s);
// & < > " escaped, for the CompleteMultipartUpload body.
std::string escape(std::string_view s);

// The text of the first <tag>...</tag> in `xml` at or after `from`, unescaped.
std::optional<std::string> tag(std::string_view xml, std::string_view tag, std::size_t from = 0);

// One object of a listing page.
struct list_item {
  std::string key;    // the object's full key
  std::uint64_t size = 0;
};

// A ListObjectsV2 page: its <Contents> whose <Key> lies below `prefix` (which ends in '/', or
// is empty) and is not a "folder" marker (a key ending in '/'), in the order of the page; and
// whether another page follows (IsTruncated true) with its continuation token.
struct list_page {
  std::vector<list_item> items;
  bool truncated = false;
  std::string continuation_token; // NextContinuationToken; "" when absent
};
list_page parse_list_page(std::string_view xml, std::string_view prefix);

// The Code and Message of an S3 error body ("<Error><Code>...</Code><Message>...</Message>").
struct error_body {
  std::optional<std::string> code;
  std::optional<std::string> message;
};
error_body parse_error(std::string_view xml);

} // namespace kozmo::runtime::s3_xml
