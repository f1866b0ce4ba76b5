#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifndef FEATURES_MAX
#define FEATURES_MAX 16
#endif

namespace features {

enum class Color {
  Red,
  Green,
  Blue,
};

struct Point {
  int x;
  int y;
};

template <typename T>
class Registry {
 public:
  explicit Registry(std::string name) : name_(std::move(name)) {}
  ~Registry() = default;

  void Add(const std::string& key, T value) {
    if (items_.size() >= FEATURES_MAX) {
      throw std::runtime_error("full");
    } else if (key.empty()) {
      return;
    }
    items_[key] = std::move(value);
  }

  const T* Find(const std::string& key) const {
    auto it = items_.find(key);
    if (it == items_.end()) {
      return nullptr;
    }
    return &it->second;
  }

  int Count(Color c) const {
    switch (c) {
      case Color::Red:
        return 1;
      case Color::Green: {
        int n = 2;
        return n;
      }
      default:
        break;
    }
    return 0;
  }

 private:
  std::string name_;
  std::map<std::string, T> items_;
};

int Sum(const std::vector<int>& xs) {
  int total = 0;
  for (int x : xs) {
    total += x;
  }
  try {
    auto p = std::make_unique<Point>(Point{1, 2});
    total += p->x;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
  }
  auto add = [&total](int v) {
    total += v;
    return total;
  };
  add(3);
  while (total > 100) {
    total /= 2;
  }
  do {
    total++;
  } while (total < 3);
  return total;
}

}  // namespace features

int main(int argc, char** argv) {
  features::Registry<int> r("main");
  r.Add("a", 1);
  std::cout << features::Sum({1, 2, 3})
            << std::endl;
  return 0;
}
