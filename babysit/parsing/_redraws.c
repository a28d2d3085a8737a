/* The redraw collapse of babysit.parsing.redraws, compiled.
 *
 * A tqdm log redraws its bar hundreds of times for each line that carries a metric,
 * and telling those redraws apart is most of what a poll of such a log costs in
 * Python (~0.4 us a line). This is the same function, line for line, as
 * `redraws.python_kept_lines`, which stays the reference: the tests hold the two
 * equal, and babysit uses that one wherever this module was not built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* What `redraws.redraw_key` computes of a line, as positions: the key is
 * (line[0:desc_end], line[total_start:total_end]). */
typedef struct {
    int is_bar;
    Py_ssize_t desc_end, total_start, total_end;
} Key;

static Py_ssize_t
find1(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, Py_UCS4 a)
{
    for (Py_ssize_t i = start; i < end; i++)
        if (PyUnicode_READ(kind, data, i) == a)
            return i;
    return -1;
}

static Py_ssize_t
find2(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, Py_UCS4 a, Py_UCS4 b)
{
    for (Py_ssize_t i = start; i + 1 < end; i++)
        if (PyUnicode_READ(kind, data, i) == a && PyUnicode_READ(kind, data, i + 1) == b)
            return i;
    return -1;
}

static Key
redraw_key(PyObject *line)
{
    Key key = {0, 0, 0, 0};
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    Py_ssize_t end = PyUnicode_GET_LENGTH(line);
    /* `line.rstrip()`, unless it already ends with `]` */
    if (end == 0 || PyUnicode_READ(kind, data, end - 1) != ']') {
        while (end > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)))
            end--;
        if (end == 0 || PyUnicode_READ(kind, data, end - 1) != ']')
            return key;
    }
    Py_ssize_t bar_at = find2(kind, data, 0, end, '%', '|');
    if (bar_at < 0)
        return key;
    Py_ssize_t bracket = find2(kind, data, bar_at, end, ' ', '[');
    if (bracket < 0) {
        bracket = find1(kind, data, bar_at, end, '[');
        if (bracket < 0)
            return key;
    }
    if (find1(kind, data, bracket, end, '=') >= 0)
        return key; /* a postfix (`loss=0.52`) makes every frame worth reading */
    Py_ssize_t slash = -1;
    for (Py_ssize_t i = bracket - 1; i >= bar_at; i--) {
        if (PyUnicode_READ(kind, data, i) == '/') {
            slash = i;
            break;
        }
    }
    key.is_bar = 1;
    key.desc_end = bar_at > 3 ? bar_at - 3 : 0;
    key.total_start = slash + 1;
    key.total_end = bracket;
    return key;
}

static int
same_text(PyObject *a, Py_ssize_t a_start, PyObject *b, Py_ssize_t b_start, Py_ssize_t length)
{
    int a_kind = PyUnicode_KIND(a), b_kind = PyUnicode_KIND(b);
    const void *a_data = PyUnicode_DATA(a), *b_data = PyUnicode_DATA(b);
    if (a_kind == b_kind)
        return memcmp((const char *)a_data + a_start * a_kind,
                      (const char *)b_data + b_start * b_kind, length * a_kind) == 0;
    for (Py_ssize_t i = 0; i < length; i++)
        if (PyUnicode_READ(a_kind, a_data, a_start + i) !=
            PyUnicode_READ(b_kind, b_data, b_start + i))
            return 0;
    return 1;
}

static int
same_key(PyObject *a, Key ka, PyObject *b, Key kb)
{
    Py_ssize_t a_total = ka.total_end - ka.total_start, b_total = kb.total_end - kb.total_start;
    return ka.desc_end == kb.desc_end && a_total == b_total
           && same_text(a, 0, b, 0, ka.desc_end)
           && same_text(a, ka.total_start, b, kb.total_start, a_total);
}

static PyObject *
kept_lines(PyObject *module, PyObject *lines)
{
    if (!PyList_Check(lines)) {
        PyErr_SetString(PyExc_TypeError, "kept_lines() takes a list of str");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(lines);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyUnicode_Check(PyList_GET_ITEM(lines, i))) {
            PyErr_SetString(PyExc_TypeError, "kept_lines() takes a list of str");
            return NULL;
        }
    }
    PyObject *kept = PyList_New(0);
    if (kept == NULL)
        return NULL;
    Key next = {0, 0, 0, 0};
    if (count > 0)
        next = redraw_key(PyList_GET_ITEM(lines, 0));
    for (Py_ssize_t i = 0; i < count; i++) {
        Key key = next;
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (i + 1 < count)
            next = redraw_key(PyList_GET_ITEM(lines, i + 1));
        else
            next.is_bar = 0;
        if (key.is_bar && next.is_bar && same_key(line, key, PyList_GET_ITEM(lines, i + 1), next))
            continue; /* redrawn by the next line */
        PyObject *item = Py_BuildValue("(nO)", i, key.is_bar ? Py_True : Py_False);
        if (item == NULL || PyList_Append(kept, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(kept);
            return NULL;
        }
        Py_DECREF(item);
    }
    return kept;
}

static PyMethodDef methods[] = {
    {"kept_lines", kept_lines, METH_O,
     "kept_lines(lines, /)\n--\n\n"
     "(index, is_bar) of each line a parser must read: every line but a bar redraw\n"
     "that the next line redraws again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_redraws", "The redraw collapse, compiled.", -1, methods,
};

PyMODINIT_FUNC
PyInit__redraws(void)
{
    return PyModule_Create(&module);
}
