// Status and Expected<T>: how every module boundary reports success or failure.
//
// A Status is a code plus a human message that names what went wrong and where
// (node, op, opset, shapes). Expected<T> holds either a value or a non-OK Status.
// Bad user input is always reported through these, never by assert or crash.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ucudnn {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: flags, shapes, dtypes, files
  kInvalidModel,     // the .onnx file is malformed or inconsistent
  kUnsupported,      // valid input we do not handle (op, opset, dtype, attribute value)
  kNotFound,         // a file, value, input or output that does not exist
  kIoError,          // reading or writing a file failed
  kOutOfMemory,      // an allocation (host or device) failed
  kInfeasible,       // e.g. a workspace budget no configuration fits
  kDeviceError,      // CUDA / cuDNN / cuBLAS reported an error
  kInternal,         // a bug in ucudnn
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidModel: node 'conv1' (Conv, opset 13): ..." — for logs and the CLI.
  std::string to_string() const;

  // Returns a copy with `context` prepended to the message ("context: message").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Shorthands: Status constructors named after their code.
inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status invalid_model(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
inline Status infeasible(std::string m) { return {StatusCode::kInfeasible, std::move(m)}; }
inline Status device_error(std::string m) { return {StatusCode::kDeviceError, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}
  Expected(Status status) : data_(std::move(status)) {
    assert(!std::get<Status>(data_).is_ok() && "Expected constructed from an OK Status");
  }

  bool has_value() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; Status::ok() when a value is held.
  Status status() const { return has_value() ? Status::ok() : std::get<Status>(data_); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace ucudnn

// Propagate a non-OK Status to the caller.
#define UCUDNN_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::ucudnn::Status _ucudnn_status = (expr);     \
    if (!_ucudnn_status.is_ok()) return _ucudnn_status; \
  } while (0)

#define UCUDNN_CONCAT_INNER(a, b) a##b
#define UCUDNN_CONCAT(a, b) UCUDNN_CONCAT_INNER(a, b)
// `UCUDNN_ASSIGN_OR_RETURN(auto x, f());` — unwrap an Expected or return its Status.
#define UCUDNN_ASSIGN_OR_RETURN(lhs, expr)                                  \
  auto UCUDNN_CONCAT(_ucudnn_expected_, __LINE__) = (expr);                 \
  if (!UCUDNN_CONCAT(_ucudnn_expected_, __LINE__).has_value())              \
    return UCUDNN_CONCAT(_ucudnn_expected_, __LINE__).status();             \
  lhs = std::move(UCUDNN_CONCAT(_ucudnn_expected_, __LINE__)).value()
