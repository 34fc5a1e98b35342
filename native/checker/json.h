#pragma once
// A small JSON value for the checker's one summary (ordered objects, no parsing).

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace power_check {

class json {
  public:
    enum kind_t { k_null, k_bool, k_number, k_string, k_array, k_object };

    json() = default;
    json(std::nullptr_t) {}
    json(bool b) : kind_(k_bool), b_(b) {}
    json(int v) : kind_(k_number), n_(v) {}
    json(unsigned v) : kind_(k_number), n_(v) {}
    json(long v) : kind_(k_number), n_(static_cast<double>(v)) {}
    json(unsigned long v) : kind_(k_number), n_(static_cast<double>(v)) {}
    json(long long v) : kind_(k_number), n_(static_cast<double>(v)) {}
    json(unsigned long long v) : kind_(k_number), n_(static_cast<double>(v)) {}
    json(double v) : kind_(k_number), n_(v) {}
    json(float v) : kind_(k_number), n_(v) {}
    json(const char * s) : kind_(k_string), s_(s) {}
    json(std::string s) : kind_(k_string), s_(std::move(s)) {}

    // a number written with every digit it needs to read back as the same double (the summary's
    // figures are written with 6 significant digits)
    static json exact(double v) {
        json j(v);
        j.exact_ = true;
        return j;
    }
    static json array() {
        json j;
        j.kind_ = k_array;
        return j;
    }
    static json object() {
        json j;
        j.kind_ = k_object;
        return j;
    }
    template <class T> static json array_of(const std::vector<T> & v) {
        json j = array();
        for (const T & x : v)
            j.push(json(x));
        return j;
    }

    kind_t kind() const { return kind_; }

    // object member, created (as null) when absent
    json & operator[](const std::string & key) {
        if (kind_ != k_object) {
            *this = object();
        }
        for (auto & kv : members_) {
            if (kv.first == key) return kv.second;
        }
        members_.emplace_back(key, json());
        return members_.back().second;
    }
    json & push(json v) {
        if (kind_ != k_array) {
            *this = array();
        }
        items_.push_back(std::move(v));
        return items_.back();
    }
    size_t size() const { return kind_ == k_array ? items_.size() : members_.size(); }

    // reading back what was written (the user-speed table): null when absent
    const json * find(const std::string & key) const {
        for (const auto & kv : members_) {
            if (kv.first == key) return &kv.second;
        }
        return nullptr;
    }
    bool is_number() const { return kind_ == k_number; }
    double number() const { return n_; }
    const std::string & string() const { return s_; }
    const std::vector<json> & items() const { return items_; }

    std::string dump(int indent = 2) const {
        std::string out;
        write(out, indent, 0);
        return out;
    }

  private:
    static void write_string(std::string & out, const std::string & s) {
        out += '"';
        for (unsigned char c : s) {
            switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
            }
        }
        out += '"';
    }
    void write(std::string & out, int indent, int depth) const {
        const std::string pad = indent > 0 ? "\n" + std::string(static_cast<size_t>(indent * (depth + 1)), ' ') : "";
        const std::string end = indent > 0 ? "\n" + std::string(static_cast<size_t>(indent * depth), ' ') : "";
        switch (kind_) {
        case k_null:
            out += "null";
            break;
        case k_bool:
            out += b_ ? "true" : "false";
            break;
        case k_number: {
            if (!std::isfinite(n_)) {
                out += "null";
            } else if (n_ == std::floor(n_) && std::fabs(n_) < 9e15) {
                out += std::to_string(static_cast<long long>(n_));
            } else {
                char buf[32];
                std::snprintf(buf, sizeof buf, exact_ ? "%.17g" : "%.6g", n_);
                out += buf;
            }
            break;
        }
        case k_string:
            write_string(out, s_);
            break;
        case k_array: {
            // arrays of plain values stay on one line
            bool flat = true;
            for (const auto & v : items_)
                flat = flat && v.kind_ != k_array && v.kind_ != k_object;
            out += '[';
            for (size_t i = 0; i < items_.size(); i++) {
                if (i) out += flat ? ", " : ",";
                if (!flat) out += pad;
                items_[i].write(out, indent, depth + 1);
            }
            if (!flat && !items_.empty()) out += end;
            out += ']';
            break;
        }
        case k_object: {
            // objects of plain values (a case's audit, a speed row) stay on one line
            bool flat = members_.size() <= 24;
            for (const auto & kv : members_)
                flat = flat && kv.second.kind_ != k_array && kv.second.kind_ != k_object;
            out += '{';
            for (size_t i = 0; i < members_.size(); i++) {
                if (i) out += flat ? ", " : ",";
                if (!flat) out += pad;
                write_string(out, members_[i].first);
                out += indent > 0 ? ": " : ":";
                members_[i].second.write(out, indent, depth + 1);
            }
            if (!flat && !members_.empty()) out += end;
            out += '}';
            break;
        }
        }
    }

    kind_t kind_ = k_null;
    bool b_      = false;
    double n_    = 0;
    bool exact_  = false;
    std::string s_;
    std::vector<json> items_;
    std::vector<std::pair<std::string, json>> members_;
};

} // namespace power_check
