// lower_composite_ops (lowering.h): each family's lowering in turn.
#include "onnx_import/lowering/lowering.h"

#include "onnx_import/lowering/cast_like.h"
#include "onnx_import/lowering/constant_of_shape.h"
#include "onnx_import/lowering/conv_transpose.h"
#include "onnx_import/lowering/depth_to_space.h"
#include "onnx_import/lowering/einsum.h"
#include "onnx_import/lowering/gather_nd.h"
#include "onnx_import/lowering/group_norm.h"
#include "onnx_import/lowering/gelu.h"
#include "onnx_import/lowering/hardmax.h"
#include "onnx_import/lowering/instance_norm.h"
#include "onnx_import/lowering/layer_norm.h"
#include "onnx_import/lowering/max_min.h"
#include "onnx_import/lowering/max_unpool.h"
#include "onnx_import/lowering/mean_variance_norm.h"
#include "onnx_import/lowering/nll_loss.h"
#include "onnx_import/lowering/one_hot.h"
#include "onnx_import/lowering/sum_mean.h"
#include "onnx_import/lowering/tile.h"
#include "onnx_import/lowering/upsample.h"
#include "onnx_import/lowering/volumetric.h"

namespace ucudnn {

Status lower_composite_ops(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_volumetric_conv_transposes(graph));
  UCUDNN_RETURN_IF_ERROR(lower_conv_transposes(graph));
  UCUDNN_RETURN_IF_ERROR(lower_volumetric_ops(graph));
  UCUDNN_RETURN_IF_ERROR(lower_layer_norms(graph));
  UCUDNN_RETURN_IF_ERROR(lower_instance_norms(graph));
  UCUDNN_RETURN_IF_ERROR(lower_group_norms(graph));
  UCUDNN_RETURN_IF_ERROR(lower_depth_to_space(graph));
  UCUDNN_RETURN_IF_ERROR(lower_tiles(graph));
  UCUDNN_RETURN_IF_ERROR(lower_sums_and_means(graph));
  UCUDNN_RETURN_IF_ERROR(lower_maxes_and_mins(graph));
  UCUDNN_RETURN_IF_ERROR(lower_upsamples(graph));
  UCUDNN_RETURN_IF_ERROR(lower_cast_likes(graph));
  UCUDNN_RETURN_IF_ERROR(lower_einsums(graph));
  UCUDNN_RETURN_IF_ERROR(lower_losses(graph));
  UCUDNN_RETURN_IF_ERROR(lower_hardmaxes(graph));
  UCUDNN_RETURN_IF_ERROR(lower_gelus(graph));
  UCUDNN_RETURN_IF_ERROR(lower_gather_nds(graph));
  UCUDNN_RETURN_IF_ERROR(lower_one_hots(graph));
  UCUDNN_RETURN_IF_ERROR(lower_mean_variance_norms(graph));
  UCUDNN_RETURN_IF_ERROR(lower_max_unpools(graph));  // before ConstantOfShape's: it makes one
  return lower_constants_of_shape(graph);
}

}  // namespace ucudnn
