// ImageFolderDataset (see image_folder.h): the directory scan at open, decoding and transforms
// per sample.
#include "training/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <utility>

namespace ucudnn::data {
namespace fs = std::filesystem;
namespace {

bool is_image_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* ext : {".jpg", ".jpeg", ".png"}) {
    const std::string e = ext;
    if (lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

// The class directories of `dir`, sorted by name.
Expected<std::vector<std::string>> list_classes(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found("image folder '" + dir + "' is not a directory");
  std::vector<std::string> classes;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) classes.push_back(it->path().filename().string());
  if (ec) return io_error("cannot list image folder '" + dir + "': " + ec.message());
  if (classes.empty()) return invalid_argument("image folder '" + dir + "' holds no class directories");
  std::sort(classes.begin(), classes.end());
  return classes;
}

// The image files under `class_dir`, recursively, ordered by (directory, file name) as
// torchvision's sorted(os.walk(...)) with sorted(fnames).
Expected<std::vector<std::string>> list_images(const std::string& class_dir) {
  std::vector<std::pair<std::string, std::string>> found;  // (directory, file name)
  std::error_code ec;
  const auto options = fs::directory_options::follow_directory_symlink;
  for (fs::recursive_directory_iterator it(class_dir, options, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_image_name(name) && !it->is_directory(ec)) found.emplace_back(it->path().parent_path().string(), name);
  }
  if (ec) return io_error("cannot list class directory '" + class_dir + "': " + ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  files.reserve(found.size());
  for (const auto& [directory, name] : found) files.push_back(directory + "/" + name);
  return files;
}

}  // namespace

Expected<std::shared_ptr<ImageFolderDataset>> ImageFolderDataset::open(const std::string& root, Split split,
                                                                       TransformOptions options) {
  options.train = split == Split::kTrain;
  UCUDNN_ASSIGN_OR_RETURN(auto set, open_dir(root + "/" + split_name(split), options));
  std::error_code ec;
  const std::string train_dir = root + "/train";
  if (split == Split::kVal && fs::is_directory(train_dir, ec)) {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<std::string> train_classes, list_classes(train_dir));
    if (train_classes != set->classes_)
      return invalid_argument("image folder '" + root + "': val has " + std::to_string(set->classes_.size()) +
                              " classes and train " + std::to_string(train_classes.size()) +
                              ", or they differ in name; both must hold the same class directories");
  }
  return set;
}

Expected<std::shared_ptr<ImageFolderDataset>> ImageFolderDataset::open_dir(const std::string& dir,
                                                                           const TransformOptions& options) {
  if (options.size <= 0)
    return invalid_argument("image size must be positive (got " + std::to_string(options.size) + ")");
  for (float s : options.std)
    if (!(s > 0)) return invalid_argument("every normalisation std must be positive (got " + std::to_string(s) + ")");
  std::shared_ptr<ImageFolderDataset> set(new ImageFolderDataset());
  set->dir_ = dir;
  set->options_ = options;
  set->shape_ = {3, options.size, options.size};
  UCUDNN_ASSIGN_OR_RETURN(set->classes_, list_classes(dir));
  for (size_t label = 0; label < set->classes_.size(); ++label) {
    const std::string class_dir = dir + "/" + set->classes_[label];
    UCUDNN_ASSIGN_OR_RETURN(std::vector<std::string> files, list_images(class_dir));
    if (files.empty())
      return invalid_argument("class directory '" + class_dir + "' holds no .jpg, .jpeg or .png file");
    for (std::string& file : files) {
      set->files_.push_back(std::move(file));
      set->labels_.push_back(static_cast<int64_t>(label));
    }
  }
  return set;
}

std::string ImageFolderDataset::describe() const {
  return "ImageFolder (" + dir_ + "): " + std::to_string(size()) + " images in " + std::to_string(num_classes()) +
         " classes → " + shape_to_string(shape_) + (options_.train ? ", train transforms" : ", eval transforms");
}

Status ImageFolderDataset::load(int64_t index, uint64_t seed, float* dst, int64_t* label) const {
  if (index < 0 || index >= size())
    return invalid_argument("sample " + std::to_string(index) + " is outside image folder '" + dir_ + "' (" +
                            std::to_string(size()) + " images)");
  UCUDNN_ASSIGN_OR_RETURN(RgbImage image, read_image_file(files_[static_cast<size_t>(index)]));
  apply_transforms(image, options_, seed, dst);
  *label = labels_[static_cast<size_t>(index)];
  return Status::ok();
}

}  // namespace ucudnn::data
