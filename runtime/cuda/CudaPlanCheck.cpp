//===- CudaPlanCheck.cpp - static checks of a CUDA launch plan ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// checkCudaPlan (CudaModel.h): the data flow of a read plan, before any
// driver call or emulated launch. The arena is tracked byte-exactly as a map
// of disjoint intervals, each holding the buffer through which it was last
// written and by what (the weights file, the inputs, or a step): arena space
// is shared by liveness, so a read must find its own buffer's bytes, not
// merely written ones. Each argument a kernel reads or writes (the plan's
// KernelArg.reads/.writes) is taken to be read or written whole: what a
// kernel does to part of an argument is invisible here (the emulator's NaN
// fill shows a read of an unwritten part).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaModel.h"

#include <algorithm>
#include <map>

using namespace gpuopt::runtime;

namespace {

/// What last wrote a range of the arena: a step of `plan` ("init", "run"),
/// or, with `plan` null, the loader (the weights file or the inputs).
struct Writer {
  unsigned buffer = 0;
  const char *plan = nullptr;
  size_t step = 0;
};

/// The arena's written bytes as disjoint intervals [begin, end).
class ArenaState {
public:
  /// Marks [begin, end) as written by `w`.
  void write(uint64_t begin, uint64_t end, const Writer &w) {
    if (begin >= end)
      return;
    auto it = map.lower_bound(begin);
    if (it != map.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > begin) {
        Interval old = prev->second;
        prev->second.end = begin; // prev starts before `begin`
        if (old.end > end)
          map.emplace(end, Interval{old.end, old.writer});
      }
    }
    while (it != map.end() && it->first < end) {
      if (it->second.end > end) {
        Interval rest{it->second.end, it->second.writer};
        map.erase(it);
        map.emplace(end, rest);
        break;
      }
      it = map.erase(it);
    }
    map.emplace(begin, Interval{end, w});
  }

  /// The pieces of [begin, end) in order: `f(from, to, writer)`, writer null
  /// for bytes never written. Stops when `f` returns false.
  template <typename F> void visit(uint64_t begin, uint64_t end, F f) const {
    uint64_t at = begin;
    auto it = map.upper_bound(begin);
    if (it != map.begin() && std::prev(it)->second.end > begin)
      --it;
    for (; it != map.end() && it->first < end; ++it) {
      uint64_t from = std::max(it->first, begin);
      uint64_t to = std::min(it->second.end, end);
      if (from > at && !f(at, from, nullptr))
        return;
      if (!f(from, to, &it->second.writer))
        return;
      at = to;
    }
    if (at < end)
      f(at, end, nullptr);
  }

  /// Forgets every interval whose writer fails `keep`.
  template <typename P> void retain(P keep) {
    for (auto it = map.begin(); it != map.end();)
      it = keep(it->second.writer) ? std::next(it) : map.erase(it);
  }

private:
  struct Interval {
    uint64_t end;
    Writer writer;
  };
  std::map<uint64_t, Interval> map;
};

/// The first piece of [begin, end) that fails `good` (called with the
/// piece's writer, null for bytes never written), merged with the pieces
/// right after it that fail in the same way (never written, or last written
/// through the same buffer).
struct BadRange {
  bool found = false;
  uint64_t from = 0, to = 0;
  bool written = false;
  Writer writer;
};

template <typename G>
BadRange findBad(const ArenaState &state, uint64_t begin, uint64_t end,
                 G good) {
  BadRange bad;
  state.visit(begin, end, [&](uint64_t from, uint64_t to, const Writer *w) {
    if (!bad.found) {
      if (good(w))
        return true;
      bad = {true, from, to, w != nullptr, w ? *w : Writer()};
      return true;
    }
    bool same = from == bad.to && (w != nullptr) == bad.written &&
                (!w || w->buffer == bad.writer.buffer) && !good(w);
    if (same)
      bad.to = to;
    return same;
  });
  return bad;
}

class PlanChecker {
public:
  PlanChecker(const CudaArtifact &art, const std::string &path)
      : art(art), path(path) {}

  Status run() {
    for (unsigned id = 0; id < art.buffers.size(); ++id)
      if (art.buffers[id].kind == "param")
        state.write(begin(id), end(id), Writer{id, nullptr, 0});
    if (Status s = walk("init", art.init); !s)
      return s;
    // What persists from load to every forward: the params and constants.
    state.retain([&](const Writer &w) {
      const std::string &kind = art.buffers[w.buffer].kind;
      return kind == "param" || kind == "constant";
    });
    for (unsigned id : art.inputs) {
      BadRange bad = findBad(state, begin(id), end(id),
                             [](const Writer *w) { return !w; });
      if (bad.found)
        return fail("run: " + what(id) + " overlaps arena bytes " + range(bad) +
                    " of " + what(bad.writer.buffer));
      state.write(begin(id), end(id), Writer{id, nullptr, 0});
    }
    if (Status s = walk("run", art.run); !s)
      return s;
    for (unsigned id : art.outputs) {
      BadRange bad = findBad(state, begin(id), end(id), [&](const Writer *w) {
        return w && w->buffer == id;
      });
      if (bad.found)
        return fail("run: " + what(id) +
                    " does not hold what the forward wrote through it at its "
                    "end: arena bytes " +
                    range(bad) + cause(bad));
    }
    return Status::ok();
  }

private:
  const CudaArtifact &art;
  const std::string &path;
  ArenaState state;

  uint64_t begin(unsigned id) const { return art.buffers[id].offset; }
  uint64_t end(unsigned id) const {
    return art.buffers[id].offset + art.buffers[id].bytes;
  }

  Status fail(const std::string &what) const {
    return Status::error(path + ": invalid CUDA artifact: " + what);
  }

  static std::string range(const BadRange &bad) {
    return "[" + std::to_string(bad.from) + ", " + std::to_string(bad.to) + ")";
  }

  std::string what(unsigned id) const { return describeCudaBuffer(art, id); }

  /// ": never written" or " last written through X by Y".
  std::string cause(const BadRange &bad) const {
    if (!bad.written)
      return " hold nothing written before";
    const Writer &w = bad.writer;
    std::string by;
    if (!w.plan)
      by = art.buffers[w.buffer].kind == "param" ? "the weights file"
                                                 : "the inputs";
    else
      by = describeCudaStep(art, w.plan, w.step);
    return " were last written through " + what(w.buffer) + " by " + by;
  }

  Status walk(const char *plan, const std::vector<CudaStep> &steps) {
    bool forward = plan[0] == 'r';
    for (size_t i = 0; i < steps.size(); ++i) {
      const CudaStep &step = steps[i];
      const CudaKernel &k = art.kernels[step.kernel];
      auto bad = [&](size_t a, const std::string &why) {
        return fail(describeCudaStep(art, plan, i) + ": argument " +
                    std::to_string(a) + " " + why);
      };
      // A written argument shares no byte with another argument.
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!k.args[a].writes)
          continue;
        unsigned id = step.args[a];
        for (size_t o = 0; o < step.args.size(); ++o) {
          unsigned other = step.args[o];
          uint64_t from = std::max(begin(id), begin(other));
          uint64_t to = std::min(end(id), end(other));
          if (o == a || from >= to)
            continue;
          if (other == id) {
            if (k.args[a].inPlace && k.args[o].inPlace)
              continue;
            return bad(a, "writes " + what(id) + ", which is also argument " +
                              std::to_string(o) +
                              " of the launch (not both in place)");
          }
          return bad(a, "writes " + what(id) + ", which overlaps argument " +
                            std::to_string(o) + ", " + what(other) +
                            ", at arena bytes [" + std::to_string(from) + ", " +
                            std::to_string(to) + ")");
        }
      }
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!k.args[a].reads)
          continue;
        unsigned id = step.args[a];
        BadRange r = findBad(state, begin(id), end(id), [&](const Writer *w) {
          return w && w->buffer == id;
        });
        if (r.found)
          return bad(a, "reads " + what(id) +
                            (r.written ? ", but its bytes were reused: "
                                       : " before it is written: ") +
                            "arena bytes " + range(r) + cause(r));
      }
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!k.args[a].writes)
          continue;
        unsigned id = step.args[a];
        const std::string &kind = art.buffers[id].kind;
        if (kind == "param")
          return bad(a, "writes " + what(id) +
                            ": parameters are read-only (the weights file "
                            "writes them at load)");
        if (kind == "input")
          return bad(a, "writes " + what(id) +
                            ": inputs are read-only (every forward reads "
                            "them as given)");
        if (forward && kind == "constant")
          return bad(a, "writes " + what(id) +
                            ": constants are written at load (init) only, "
                            "every forward reads them");
        // Nor the bytes of a buffer that must keep its contents.
        BadRange r = findBad(state, begin(id), end(id), [&](const Writer *w) {
          if (!w || w->buffer == id)
            return true;
          const std::string &owner = art.buffers[w->buffer].kind;
          return !(owner == "param" || owner == "input" ||
                   (forward && owner == "constant"));
        });
        if (r.found)
          return bad(a, "writes " + what(id) + " over arena bytes " + range(r) +
                            " of " + what(r.writer.buffer));
      }
      for (size_t a = 0; a < step.args.size(); ++a)
        if (k.args[a].writes)
          state.write(begin(step.args[a]), end(step.args[a]),
                      Writer{step.args[a], plan, i});
    }
    return Status::ok();
  }
};

} // namespace

Status gpuopt::runtime::checkCudaPlan(const CudaArtifact &art,
                                      const std::string &path) {
  return PlanChecker(art, path).run();
}
